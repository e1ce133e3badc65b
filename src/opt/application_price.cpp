#include "opt/application_price.h"

#include <algorithm>

namespace graphsub::opt {
namespace {

constexpr NodeId kNone = ~NodeId{0};

// The graph after the rewrite, seen through `scratch`: parent nodes below `n`, new nodes from
// `first`, every tensor reference remapped as Rewrite::finish would rewrite it (replacements
// in order, then new nodes shared with their old duplicates).
struct View {
  const Graph& s;
  size_t n;
  NodeId first;
  const std::vector<Replacement>& reps;
  PriceBuffers& buf;

  bool in_range(NodeId id) const { return id < n || id >= first; }
  TensorRef remap(TensorRef t) const {
    for (auto& r : reps)
      if (t == r.from) t = r.to;
    if (t.node >= first && buf.alias[t.node - first] != kNone) t.node = buf.alias[t.node - first];
    return t;
  }
  // Marks buf.live by reachability from the (remapped) graph outputs.
  void mark_live() {
    std::fill(buf.live.begin(), buf.live.begin() + static_cast<std::ptrdiff_t>(n), 0);
    std::fill(buf.live.begin() + first, buf.live.end(), 0);
    buf.stack.clear();
    for (auto& o : s.outputs()) buf.stack.push_back(remap(o.ref).node);
    while (!buf.stack.empty()) {
      NodeId id = buf.stack.back();
      buf.stack.pop_back();
      if (!in_range(id) || !s.alive(id) || buf.live[id]) continue;
      buf.live[id] = 1;
      for (auto r : s.node(id).inputs) buf.stack.push_back(remap(r).node);
    }
  }
  bool same_inputs(const Node& a, const Node& b) const {
    if (a.inputs.size() != b.inputs.size()) return false;
    for (size_t i = 0; i < a.inputs.size(); ++i)
      if (remap(a.inputs[i]) != remap(b.inputs[i])) return false;
    return true;
  }
};

}  // namespace

std::optional<double> price_application(const Graph& parent, const Graph& scratch, NodeId first_new,
                                        const std::vector<Replacement>& reps,
                                        const Pricing& pricing, PriceBuffers& buf) {
  for (auto& r : reps)
    if (scratch.type(r.from) != scratch.type(r.to)) return std::nullopt;
  const size_t n = parent.num_slots(), end = scratch.num_slots();
  buf.live.resize(end);
  buf.alias.assign(end - first_new, kNone);
  View v{scratch, n, first_new, reps, buf};
  v.mark_live();  // as after replace_uses and remove_dead
  bool shared = false;

  // share_duplicates: each new operator node identical to an older live one becomes it.
  for (NodeId id = first_new; id < end; ++id) {
    if (!scratch.alive(id) || !buf.live[id]) continue;
    const Node& nn = scratch.node(id);
    if (nn.is_source() || nn.op->cls == OpClass::Opaque) continue;
    for (NodeId m = 0; m < n; ++m) {
      if (!buf.live[m] || !scratch.alive(m)) continue;
      const Node& o = scratch.node(m);
      if (o.op != nn.op || o.outputs.size() != nn.outputs.size() || !v.same_inputs(o, nn) ||
          !(o.attrs == nn.attrs))
        continue;
      buf.alias[id - first_new] = m;
      shared = true;
      break;
    }
  }
  if (shared) v.mark_live();  // the final remove_dead

  double cost = pricing.total;
  for (NodeId id = 0; id < n; ++id)
    if (parent.alive(id) && !buf.live[id]) cost -= pricing.costs[id];
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
