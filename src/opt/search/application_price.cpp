#include "opt/search/application_price.h"

#include <algorithm>

namespace graphsub::opt {
namespace {

constexpr NodeId kNone = ~NodeId{0};

// The graph after the rewrite: parent nodes below `n`, added nodes (buf.added) from `first`,
// every tensor reference remapped as Rewrite::finish would rewrite it (replacements in order,
// then new nodes shared with their old duplicates).
//
// Liveness (what remove_dead keeps) is worked out only in a region: the new nodes, and the
// parent nodes that might die, i.e. the matched nodes and, upwards from them, the nodes whose
// readers all lie in the region and are dead (View::settle). A parent node outside the region
// still has a live reader, so it stays live (the parent has no dead operators:
// GraphIndex::has_dead_operators; otherwise every node is taken as the region).
struct View {
  const GraphIndex& ix;
  const Graph& p;  // the parent
  size_t n;
  NodeId first;
  const std::vector<Replacement>& reps;
  PriceBuffers& buf;
  bool whole = false;  // the region is the whole graph

  const AddedNode& added(NodeId id) const { return buf.added[id - first]; }
  const std::vector<TensorRef>& inputs(NodeId id) const {
    return id < n ? p.node(id).inputs : added(id).inputs;
  }
  bool alive(NodeId id) const { return id < n ? p.alive(id) : id >= first && added(id).alive; }
  const TensorType& type(TensorRef t) const {
    return t.node < n ? p.type(t) : (*added(t.node).outputs)[t.output];
  }
  bool region(NodeId id) const { return id >= first || (id < n && (whole || buf.in_region[id])); }
  TensorRef remap(TensorRef t) const {
    for (auto& r : reps)
      if (t == r.from) t = r.to;
    if (t.node >= first && buf.alias[t.node - first] != kNone) t.node = buf.alias[t.node - first];
    return t;
  }
  bool live(NodeId id) const { return region(id) ? buf.live[id] != 0 : true; }

  void add_to_region(NodeId id) {
    buf.in_region[id] = 1;
    buf.region.push_back(id);
  }
  // A parent node joins the region when it might die: it feeds no graph output and all its
  // readers are in the region and dead. (Marked live until the next mark_live works it out.)
  void try_add(NodeId id) {
    if (buf.in_region[id] || ix.feeds_graph_output(id)) return;
    for (NodeId u : ix.consumers(id))
      if (!buf.in_region[u] || buf.live[u]) return;
    add_to_region(id);
    buf.live[id] = 1;
  }
  // Liveness over a region grown from the matched nodes: mark, add the inputs of dead region
  // nodes that might die with them, mark again, until nothing is added. Nodes outside the
  // region keep a live reader, so they are live. Growing only from dead nodes keeps the region
  // to the match and what dies with it (the whole upward closure of single-reader chains above
  // a NasRNN match averaged 34 nodes for 2 matched).
  void settle() {
    for (;;) {
      mark_live();
      if (whole) return;
      size_t before = buf.region.size();
      for (size_t i = 0; i < before; ++i)
        if (NodeId id = buf.region[i]; !buf.live[id])
          for (auto r : p.node(id).inputs) try_add(r.node);
      if (buf.region.size() == before) return;
    }
  }

  void mark(NodeId id) {
    if (!region(id) || !alive(id) || buf.live[id]) return;
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
    for (auto& o : p.outputs()) mark(remap(o.ref).node);
    if (!whole)
      for (NodeId id : buf.region)
        for (NodeId u : ix.consumers(id))
          if (!buf.in_region[u])
            for (auto r : p.node(u).inputs) mark(remap(r).node);
    while (!buf.stack.empty()) {
      NodeId id = buf.stack.back();
      buf.stack.pop_back();
      for (auto r : inputs(id)) mark(remap(r).node);
    }
  }
  bool same_inputs(const Node& a, const AddedNode& b) const {
    if (a.inputs.size() != b.inputs.size()) return false;
    for (size_t i = 0; i < a.inputs.size(); ++i)
      if (remap(a.inputs[i]) != remap(b.inputs[i])) return false;
    return true;
  }
  bool duplicate(NodeId m, const AddedNode& nn) const {
    if (!p.alive(m) || !live(m)) return false;
    const Node& o = p.node(m);
    return o.op == nn.op && o.outputs.size() == nn.outputs->size() && same_inputs(o, nn) &&
           o.attrs == *nn.attrs;
  }
  // share_duplicates: the first (lowest id) live old node identical to new node `nn`. Such a
  // node reads nn's first input after remapping, so it reads it in the parent already or
  // read a replaced tensor: only those readers need comparing.
  NodeId first_duplicate(const AddedNode& nn) {
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

// Prices the nodes in buf.added (ids from `first`) replacing `reps`.
std::optional<double> price(const GraphIndex& ix, NodeId first,
                            const std::vector<Replacement>& reps,
                            const std::vector<NodeId>& matched, const ParentCosts& pricing,
                            PriceBuffers& buf) {
  const Graph& parent = ix.graph();
  const size_t n = parent.num_slots(), end = first + buf.num_added;
  View v{ix, parent, n, first, reps, buf};
  for (auto& r : reps)
    if (v.type(r.from) != v.type(r.to)) return std::nullopt;
  buf.live.resize(end);
  buf.alias.assign(end - first, kNone);
  if (buf.in_region.size() < n) buf.in_region.assign(n, 0);
  v.whole = ix.has_dead_operators();
  if (!v.whole)
    for (NodeId id : matched)
      if (!buf.in_region[id]) v.add_to_region(id);
  v.settle();  // as after replace_uses and remove_dead

  bool shared = false;
  for (NodeId id = first; id < end; ++id) {
    const AddedNode& nn = v.added(id);
    if (!nn.alive || !buf.live[id]) continue;
    if (nn.op->cls == OpClass::Source || nn.op->cls == OpClass::Opaque) continue;
    if (NodeId m = v.first_duplicate(nn); m != kNone) {
      buf.alias[id - first] = m;
      shared = true;
    }
  }
  if (shared) v.settle();  // the final remove_dead

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
  // Only the new nodes' flags are stored (the parent's are read in place: copying them would
  // make every application cost the graph's size).
  buf.constant.assign(end - first, 0);
  auto is_constant = [&](NodeId id) -> uint8_t {
    if (id < n) return pricing.constant[id];
    return id >= first ? buf.constant[id - first] : 0;  // ids between: holes, never read
  };
  for (NodeId id = first; id < end; ++id) {
    const AddedNode& nn = v.added(id);
    if (!nn.alive) continue;
    if (NodeId a = buf.alias[id - first]; a != kNone) {
      buf.constant[id - first] = pricing.constant[a];
      continue;
    }
    if (nn.op->cls == OpClass::Source) {
      buf.constant[id - first] = nn.input ? 0 : 1;
      continue;
    }
    bool all = nn.op->cls != OpClass::Opaque && !nn.inputs.empty();
    for (auto r : nn.inputs) all = all && is_constant(v.remap(r).node);
    buf.constant[id - first] = all ? 1 : 0;
    if (!buf.live[id] || all) continue;  // dead, or computed ahead of run time: free
    // As CostModel::node_cost(graph, id, constant) prices the node once it is in the graph.
    buf.in_types.clear();
    buf.in_constant.clear();
    for (auto r : nn.inputs) {
      buf.in_types.push_back(&v.type(r));
      buf.in_constant.push_back(is_constant(r.node));
    }
    cost += pricing.model.node_cost(*nn.op, *nn.attrs, buf.in_types, buf.in_constant, *nn.outputs);
  }
  return cost;
}

}  // namespace

std::optional<double> price_application(const GraphIndex& ix, const Graph& scratch,
                                        NodeId first_new, const std::vector<Replacement>& reps,
                                        const std::vector<NodeId>& matched,
                                        const ParentCosts& parent, PriceBuffers& buf) {
  const size_t count = scratch.num_slots() - first_new;
  if (buf.added.size() < count) buf.added.resize(count);
  buf.num_added = count;
  for (size_t i = 0; i < count; ++i) {
    auto id = static_cast<NodeId>(first_new + i);
    AddedNode& a = buf.added[i];
    a.alive = scratch.alive(id);
    if (!a.alive) continue;
    const Node& nn = scratch.node(id);
    a.op = nn.op;
    a.attrs = &nn.attrs;
    a.inputs.assign(nn.inputs.begin(), nn.inputs.end());
    a.outputs = &nn.outputs;
    a.input = nn.is_input();
  }
  return price(ix, first_new, reps, matched, parent, buf);
}

std::optional<double> price_template(const GraphIndex& ix, const Template& t,
                                     const std::vector<TensorRef>& vars,
                                     const std::vector<Replacement>& reps,
                                     const std::vector<NodeId>& matched, const ParentCosts& parent,
                                     PriceBuffers& buf) {
  auto first = static_cast<NodeId>(ix.graph().num_slots());
  auto tensor = [&](const Template::Ref& r) {
    return r.is_var ? vars[r.index] : TensorRef{first + r.index, r.output};
  };
  if (buf.added.size() < t.nodes.size()) buf.added.resize(t.nodes.size());
  buf.num_added = t.nodes.size();
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const Template::Node& tn = t.nodes[i];
    AddedNode& a = buf.added[i];
    a.alive = true;
    a.op = tn.op;
    a.attrs = &tn.attrs;
    a.inputs.clear();
    for (auto& r : tn.inputs) a.inputs.push_back(tensor(r));
    a.outputs = &tn.outputs;
    a.input = false;  // Template::record refuses graph inputs
  }
  return price(ix, first, reps, matched, parent, buf);
}

std::optional<double> price_description(const GraphIndex& ix, const Builder& b,
                                        const std::vector<NodeId>& matched,
                                        const ParentCosts& parent, PriceBuffers& buf) {
  if (const Template* t = b.described_template())
    return price_template(ix, *t, b.template_vars(), b.replacements(), matched, parent, buf);
  // No nodes added: the parent itself stands for a scratch graph with none.
  const Graph* g = b.added_graph();
  return price_application(ix, g ? *g : ix.graph(), b.first(), b.replacements(), matched, parent,
                           buf);
}

}  // namespace graphsub::opt
