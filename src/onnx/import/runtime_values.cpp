#include "onnx/import/runtime_values.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace graphsub {

void FoldTrace::record(const std::string& name, const HostConstant& value,
                       std::vector<std::string> inputs) {
  // Exact text: int64 values as written, reals with every digit of a double.
  values[name] = fmt::format("{}|{}|{}|{::.17g}", value.elem_type, fmt::join(value.dims, ","),
                             fmt::join(value.ints, ","), value.reals);
  sources[name] = std::move(inputs);
}

std::set<std::string> runtime_values(const FoldTrace& base, const FoldTrace& alt) {
  auto differs = [&](const std::string& name) {
    auto b = base.values.find(name);
    if (b == base.values.end()) return false;  // not evaluated: computed at run time already
    auto a = alt.values.find(name);
    return a == alt.values.end() || a->second != b->second;
  };
  std::set<std::string> out;
  std::vector<std::string> todo;
  for (const auto* reads : {&base.fixed_reads, &alt.fixed_reads})
    for (const auto& name : *reads)
      if (differs(name)) todo.push_back(name);
  while (!todo.empty()) {
    std::string name = std::move(todo.back());
    todo.pop_back();
    if (!out.insert(name).second) continue;
    auto s = base.sources.find(name);
    if (s == base.sources.end()) continue;
    for (const auto& in : s->second)
      if (differs(in)) todo.push_back(in);
  }
  return out;
}

}  // namespace graphsub
