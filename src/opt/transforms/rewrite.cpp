#include "opt/transforms/rewrite.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "opt/match/graph_hashing.h"

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
  if (ix_ && !ix_->has_dead_nodes()) return finish_near(replacements);
  for (auto& r : replacements) g_.replace_uses(r.from, r.to);
  g_.remove_dead();
  share_duplicates(g_, first_new_);
  return std::move(g_);
}

namespace {

// Whether node u reads some output of node x.
bool reads(const Node& u, NodeId x) {
  for (auto r : u.inputs)
    if (r.node == x) return true;
  return false;
}

bool is_output_node(const Graph& g, NodeId x) {
  for (auto& o : g.outputs())
    if (o.ref.node == x) return true;
  return false;
}

}  // namespace

void Rewrite::remove_dead_from(std::vector<NodeId> suspects, const std::vector<NodeId>& touched) {
  auto has_reader = [&](NodeId x) {
    if (x < first_new_)
      for (NodeId u : ix_->consumers(x))
        if (g_.alive(u) && reads(g_.node(u), x)) return true;
    for (NodeId u : touched)  // old nodes edited to read new tensors
      if (g_.alive(u) && reads(g_.node(u), x)) return true;
    for (NodeId u = first_new_; u < g_.num_slots(); ++u)
      if (g_.alive(u) && reads(g_.node(u), x)) return true;
    return false;
  };
  while (!suspects.empty()) {
    NodeId x = suspects.back();
    suspects.pop_back();
    if (!g_.alive(x) || g_.node(x).is_input() || is_output_node(g_, x) || has_reader(x)) continue;
    for (auto r : g_.node(x).inputs) suspects.push_back(r.node);
    g_.remove(x);
  }
}

std::optional<Graph> Rewrite::finish_near(const std::vector<Replacement>& replacements) {
  // Old nodes that can read a replaced tensor at any point of the edits: the readers of the
  // replaced tensors in the parent (an edited node reads what replaced one of those).
  std::vector<NodeId> touched;
  for (auto& r : replacements)
    if (r.from.node < first_new_)
      touched.insert(touched.end(), ix_->consumers(r.from.node).begin(),
                     ix_->consumers(r.from.node).end());
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  std::vector<NodeId> readers = touched;
  for (NodeId id = first_new_; id < g_.num_slots(); ++id) readers.push_back(id);
  for (auto& r : replacements) g_.replace_uses(r.from, r.to, readers);
  std::vector<NodeId> suspects;
  for (auto& r : replacements) suspects.push_back(r.from.node);
  for (NodeId id = first_new_; id < g_.num_slots(); ++id) suspects.push_back(id);
  remove_dead_from(suspects, touched);

  // share_duplicates: an old node identical to a new one reads the new one's first input,
  // so it is a reader of that tensor in the parent or an edited node.
  suspects.clear();
  std::vector<NodeId> cands;
  for (NodeId id = first_new_; id < g_.num_slots(); ++id) {
    if (!g_.alive(id) || g_.node(id).is_source() || g_.node(id).op->cls == OpClass::Opaque)
      continue;
    const Node& n = g_.node(id);
    cands = touched;
    if (n.inputs.empty()) {
      cands.clear();
      for (NodeId m = 0; m < first_new_; ++m) cands.push_back(m);
    } else if (n.inputs[0].node < first_new_) {
      const auto& c = ix_->consumers(n.inputs[0].node);
      cands.insert(cands.end(), c.begin(), c.end());
      std::sort(cands.begin(), cands.end());
    }
    for (NodeId m : cands) {
      if (!g_.alive(m)) continue;
      const Node& o = g_.node(m);
      if (o.op != n.op || o.inputs != n.inputs || !(o.attrs == n.attrs) ||
          o.outputs.size() != n.outputs.size())
        continue;
      for (uint32_t k = 0; k < n.outputs.size(); ++k) g_.replace_uses({id, k}, {m, k}, readers);
      suspects.push_back(id);
      break;
    }
  }
  if (!suspects.empty()) remove_dead_from(suspects, touched);
  return std::move(g_);
}

bool acyclic(const Graph& g) {
  std::vector<NodeId> order;
  return topological_order(g, order);
}

}  // namespace graphsub::opt
