#include "opt/match/root_filter.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "core/error.h"

namespace graphsub::opt {
namespace {

void append_key(std::string& key, const NodeTest& t) {
  key += fmt::format("{}/{}/{}/{}", t.op->name, t.output, t.arity, t.num_params);
  for (auto& [pos, v] : t.literals) {
    if (auto* i = std::get_if<int64_t>(&v))
      key += fmt::format(" {}=i{}", pos, *i);
    else
      key += fmt::format(" {}=s{}", pos, std::get<std::string>(v));
  }
}

uint32_t intern(const std::string& key) {
  static std::mutex mu;
  static std::map<std::string, uint32_t> ids;
  std::lock_guard<std::mutex> lock(mu);
  return ids.emplace(key, static_cast<uint32_t>(ids.size())).first->second;
}

}  // namespace

RootFilter make_root_filter(NodeTest root, std::vector<std::optional<NodeTest>> args) {
  RootFilter f{std::move(root), std::move(args), 0, 0};
  std::string key = "(";
  append_key(key, f.root);
  key += ")";
  f.root_id = intern(key);
  bool any = false;
  for (size_t i = 0; i < f.args.size(); ++i) {
    if (!f.args[i]) continue;
    any = true;
    key += fmt::format(" [{}] ", i);
    append_key(key, *f.args[i]);
  }
  f.id = any ? intern(key) : f.root_id;
  return f;
}

size_t op_number(const OpDef* op) {
  const auto& ops = all_ops();
  auto it = std::lower_bound(ops.begin(), ops.end(), op,
                             [](const OpDef* a, const OpDef* b) { return a->name < b->name; });
  if (it == ops.end() || *it != op)
    throw Error(fmt::format("operator '{}' is not in the registry", op ? op->name : "?"));
  auto n = static_cast<size_t>(it - ops.begin());
  if (n >= kMaxOps)
    throw Error(fmt::format("operator '{}': more than {} operators registered", op->name, kMaxOps));
  return n;
}

}  // namespace graphsub::opt
