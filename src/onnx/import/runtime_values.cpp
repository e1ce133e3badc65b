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

std::optional<std::vector<size_t>> expand_axes_following(const ExpandRead& base,
                                                         const ExpandRead& alt, int64_t value,
                                                         int64_t alt_value) {
  const auto &ob = base.output, &oa = alt.output;
  if (ob.size() != oa.size() || base.input.size() != alt.input.size() ||
      base.input.size() > ob.size() || value == 0)
    return std::nullopt;
  size_t lead = ob.size() - base.input.size();  // output axes the input lacks
  std::vector<size_t> follows;
  for (size_t j = 0; j < ob.size(); ++j) {
    bool copied = j >= lead && base.input[j - lead] == ob[j] && alt.input[j - lead] == oa[j];
    if (copied || ob[j] == oa[j]) continue;
    if (ob[j] % value != 0 || ob[j] / value * alt_value != oa[j]) return std::nullopt;
    follows.push_back(j);
  }
  return follows;
}

std::set<std::string> runtime_values(const FoldTrace& base, const FoldTrace& alt, int64_t value,
                                     int64_t alt_value) {
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
  for (const auto& [out, b] : base.expand_reads) {
    auto a = alt.expand_reads.find(out);
    if (differs(b.target) &&
        (a == alt.expand_reads.end() || !expand_axes_following(b, a->second, value, alt_value)))
      todo.push_back(b.target);
  }
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
