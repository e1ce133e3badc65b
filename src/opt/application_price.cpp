#include "opt/application_price.h"

#include <algorithm>

namespace graphsub::opt {
namespace {

constexpr NodeId kNone = ~NodeId{0};

// The graph after the rewrite, seen through `scratch`: parent nodes below `n`, new nodes from
// `first`, every tensor reference remapped as Rewrite::finish would rewrite it (replacements
// in order, then new nodes shared with their old duplicates).
//
// Liveness (what remove_dead keeps) is worked out only in a region: the new nodes, and the
// parent nodes that might die, i.e. the matched nodes and, upwards from them, the nodes whose
// readers all lie in the region. A parent node outside the region still has a reader outside
// it whose inputs the rewrite leaves alone, so it stays live (the parent has no dead
// operators: GraphIndex::has_dead_operators; otherwise every node is taken as the region).
struct View {
  const GraphIndex& ix;
  const Graph& s;
  size_t n;
  NodeId first;
  const std::vector<Replacement>& reps;
  PriceBuffers& buf;
  bool whole = false;  // the region is the whole graph

  bool region(NodeId id) const { return id >= first || (id < n && (whole || buf.in_region[id])); }
  TensorRef remap(TensorRef t) const {
    for (auto& r : reps)
      if (t == r.from) t = r.to;
    if (t.node >= first && buf.alias[t.node - first] != kNone) t.node = buf.alias[t.node - first];
    return t;
  }
  bool live(NodeId id) const { return region(id) ? buf.live[id] != 0 : true; }

  void add_to_region(NodeId id) {
    if (buf.in_region[id]) return;
    buf.in_region[id] = 1;
    buf.region.push_back(id);
    for (auto r : s.node(id).inputs) buf.stack.push_back(r.node);
  }
  void build_region(const std::vector<NodeId>& matched) {
    buf.stack.clear();
    for (NodeId id : matched) add_to_region(id);
    while (!buf.stack.empty()) {
      NodeId id = buf.stack.back();
      buf.stack.pop_back();
      if (buf.in_region[id] || ix.feeds_graph_output(id)) continue;
      bool all = true;
      for (NodeId u : ix.consumers(id)) all = all && buf.in_region[u];
      if (all) add_to_region(id);
    }
  }

  void mark(NodeId id) {
    if (!region(id) || !s.alive(id) || buf.live[id]) return;
    buf.live[id] = 1;
    buf.stack.push_back(id);
  }
  // Marks buf.live over the region by reachability from the (remapped) graph outputs and from
  // the live readers outside the region.
  void mark_live() {
    for (NodeId id : buf.region) buf.live[id] = 0;
    if (whole) std::fill(buf.live.begin(), buf.live.begin() + static_cast<std::ptrdiff_t>(n), 0);
    std::fill(buf.live.begin() + first, buf.live.end(), 0);
    buf.stack.clear();
    for (auto& o : s.outputs()) mark(remap(o.ref).node);
    if (!whole)
      for (NodeId id : buf.region)
        for (NodeId u : ix.consumers(id))
          if (!buf.in_region[u])
            for (auto r : s.node(u).inputs) mark(remap(r).node);
    while (!buf.stack.empty()) {
      NodeId id = buf.stack.back();
      buf.stack.pop_back();
      for (auto r : s.node(id).inputs) mark(remap(r).node);
    }
  }
  bool same_inputs(const Node& a, const Node& b) const {
    if (a.inputs.size() != b.inputs.size()) return false;
    for (size_t i = 0; i < a.inputs.size(); ++i)
      if (remap(a.inputs[i]) != remap(b.inputs[i])) return false;
    return true;
  }
  bool duplicate(NodeId m, const Node& nn) const {
    if (!s.alive(m) || !live(m)) return false;
    const Node& o = s.node(m);
    return o.op == nn.op && o.outputs.size() == nn.outputs.size() && same_inputs(o, nn) &&
           o.attrs == nn.attrs;
  }
  // share_duplicates: the first (lowest id) live old node identical to new node `nn`. Such a
  // node reads nn's first input after remapping, so it reads it in the parent already or
  // read a replaced tensor: only those readers need comparing.
  NodeId first_duplicate(const Node& nn) {
    if (whole || nn.inputs.empty()) {
      for (NodeId m = 0; m < n; ++m)
        if (duplicate(m, nn)) return m;
      return kNone;
    }
    buf.candidates.clear();
    TensorRef t0 = remap(nn.inputs[0]);
    if (t0.node < n)
      buf.candidates.insert(buf.candidates.end(), ix.consumers(t0.node).begin(),
                            ix.consumers(t0.node).end());
    for (auto& r : reps)
      buf.candidates.insert(buf.candidates.end(), ix.consumers(r.from.node).begin(),
                            ix.consumers(r.from.node).end());
    std::sort(buf.candidates.begin(), buf.candidates.end());
    for (NodeId m : buf.candidates)
      if (m < n && duplicate(m, nn)) return m;
    return kNone;
  }
};

}  // namespace

std::optional<double> price_application(const GraphIndex& ix, const Graph& scratch,
                                        NodeId first_new, const std::vector<Replacement>& reps,
                                        const std::vector<NodeId>& matched, const Pricing& pricing,
                                        PriceBuffers& buf) {
  for (auto& r : reps)
    if (scratch.type(r.from) != scratch.type(r.to)) return std::nullopt;
  const Graph& parent = ix.graph();
  const size_t n = parent.num_slots(), end = scratch.num_slots();
  buf.live.resize(end);
  buf.alias.assign(end - first_new, kNone);
  if (buf.in_region.size() < n) buf.in_region.assign(n, 0);
  View v{ix, scratch, n, first_new, reps, buf};
  v.whole = ix.has_dead_operators();
  if (!v.whole) v.build_region(matched);
  v.mark_live();  // as after replace_uses and remove_dead

  bool shared = false;
  for (NodeId id = first_new; id < end; ++id) {
    if (!scratch.alive(id) || !buf.live[id]) continue;
    const Node& nn = scratch.node(id);
    if (nn.is_source() || nn.op->cls == OpClass::Opaque) continue;
    if (NodeId m = v.first_duplicate(nn); m != kNone) {
      buf.alias[id - first_new] = m;
      shared = true;
    }
  }
  if (shared) v.mark_live();  // the final remove_dead

  double cost = pricing.total;
  if (v.whole) {
    for (NodeId id = 0; id < n; ++id)
      if (parent.alive(id) && !buf.live[id]) cost -= pricing.costs[id];
  } else {
    for (NodeId id : buf.region)
      if (!buf.live[id]) cost -= pricing.costs[id];
  }
  for (NodeId id : buf.region) buf.in_region[id] = 0;
  buf.region.clear();

  // Constant flags as the search derives them for new nodes: from their (remapped) inputs.
  buf.constant.resize(end);
  std::copy(pricing.constant.begin(), pricing.constant.end(), buf.constant.begin());
  for (NodeId id = first_new; id < end; ++id) {
    if (!scratch.alive(id)) continue;
    if (NodeId a = buf.alias[id - first_new]; a != kNone) {
      buf.constant[id] = pricing.constant[a];
      continue;
    }
    const Node& nn = scratch.node(id);
    if (nn.is_source()) {
      buf.constant[id] = nn.is_input() ? 0 : 1;
      continue;
    }
    bool all = nn.op->cls != OpClass::Opaque && !nn.inputs.empty();
    for (auto r : nn.inputs) all = all && buf.constant[v.remap(r).node];
    buf.constant[id] = all ? 1 : 0;
    if (buf.live[id]) cost += pricing.model.node_cost(scratch, id, buf.constant);
  }
  return cost;
}

}  // namespace graphsub::opt
