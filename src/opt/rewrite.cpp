#include "opt/rewrite.h"

#include <fmt/format.h>

#include <memory>

#include "ir/error.h"

namespace graphsub::opt {

TensorRef Rewrite::add_weight(const std::string& base, TensorType type, std::vector<float> data) {
  auto taken = [&](const std::string& name) {
    for (NodeId id = 0; id < g_.num_slots(); ++id)
      if (g_.alive(id) && g_.node(id).is_source() && g_.node(id).name == name) return true;
    return false;
  };
  std::string name = base;
  for (int k = 2; taken(name); ++k) name = fmt::format("{}.{}", base, k);
  auto d = std::make_shared<const std::vector<float>>(std::move(data));
  return {g_.add_weight(name, std::move(type), std::move(d)), 0};
}

// Replaces each new operator node identical to an older one by the older one.
static void share_duplicates(Graph& g, NodeId first_new) {
  bool changed = false;
  for (NodeId id = first_new; id < g.num_slots(); ++id) {
    // Opaque operators may not be deterministic: never shared.
    if (!g.alive(id) || g.node(id).is_source() || g.node(id).op->cls == OpClass::Opaque) continue;
    const Node& n = g.node(id);
    for (NodeId m = 0; m < first_new; ++m) {
      if (!g.alive(m)) continue;
      const Node& o = g.node(m);
      if (o.op != n.op || o.inputs != n.inputs || !(o.attrs == n.attrs) ||
          o.outputs.size() != n.outputs.size())
        continue;
      for (uint32_t k = 0; k < n.outputs.size(); ++k) g.replace_uses({id, k}, {m, k});
      changed = true;
      break;
    }
  }
  if (changed) g.remove_dead();
}

std::optional<Graph> Rewrite::finish(const std::vector<Replacement>& replacements) && {
  for (auto& r : replacements)
    if (g_.type(r.from) != g_.type(r.to)) return std::nullopt;
  for (auto& r : replacements) g_.replace_uses(r.from, r.to);
  g_.remove_dead();
  share_duplicates(g_, first_new_);
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
