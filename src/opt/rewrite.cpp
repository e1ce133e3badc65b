#include "opt/rewrite.h"

#include <fmt/format.h>

#include <memory>
#include <set>

#include "ir/error.h"

namespace graphsub::opt {

TensorRef Rewrite::add_weight(const std::string& base, TensorType type, std::vector<float> data) {
  std::set<std::string> names;
  for (NodeId id = 0; id < g_.num_slots(); ++id)
    if (g_.alive(id) && g_.node(id).is_source()) names.insert(g_.node(id).name);
  std::string name = base;
  for (int k = 2; names.count(name); ++k) name = fmt::format("{}.{}", base, k);
  auto d = std::make_shared<const std::vector<float>>(std::move(data));
  return {g_.add_weight(name, std::move(type), std::move(d)), 0};
}

std::optional<Graph> Rewrite::finish(const std::vector<Replacement>& replacements) && {
  for (auto& r : replacements)
    if (g_.type(r.from) != g_.type(r.to)) return std::nullopt;
  for (auto& r : replacements) g_.replace_uses(r.from, r.to);
  g_.remove_dead();
  return std::move(g_);
}

bool acyclic(const Graph& g) {
  try {
    g.topo_order();
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace graphsub::opt
