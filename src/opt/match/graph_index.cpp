#include "opt/match/graph_index.h"

#include <algorithm>

#include "opt/match/graph_hashing.h"

namespace graphsub::opt {

std::vector<uint8_t> constant_nodes(const Graph& g) {
  std::vector<uint8_t> c(g.num_slots(), 0);
  std::vector<NodeId> order;
  if (!topological_order(g, order)) g.topo_order();  // throws, naming a node on the cycle
  for (NodeId id : order) {
    const Node& n = g.node(id);
    if (n.is_source()) {
      c[id] = n.is_input() ? 0 : 1;
      continue;
    }
    if (n.op->cls == OpClass::Opaque || n.inputs.empty()) continue;
    bool all = true;
    for (auto r : n.inputs) all = all && c[r.node];
    c[id] = all ? 1 : 0;
  }
  return c;
}

GraphIndex::GraphIndex(const Graph& g)
    : g_(g), consumers_(g.consumers()), constant_(constant_nodes(g)) {
  for (auto& o : g.outputs()) outputs_.push_back(o.ref);
  std::sort(outputs_.begin(), outputs_.end());
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id)) {
      by_op_[g.node(id).op->name].push_back(id);
      op_set_.set(op_number(g.node(id).op));
    }
  params_done_.assign(g.num_slots(), 0);
  params_.resize(g.num_slots());
  std::vector<uint8_t> live(g.num_slots(), 0);
  std::vector<NodeId> stack;
  for (auto& o : outputs_) stack.push_back(o.node);
  while (!stack.empty()) {
    NodeId id = stack.back();
    stack.pop_back();
    if (!g.alive(id) || live[id]) continue;
    live[id] = 1;
    for (auto r : g.node(id).inputs) stack.push_back(r.node);
  }
  for (NodeId id = 0; id < g.num_slots(); ++id) {
    if (!g.alive(id) || live[id] || g.node(id).is_input()) continue;
    has_dead_nodes_ = true;
    has_dead_ = has_dead_ || !g.node(id).is_source();
  }
}

bool GraphIndex::feeds_graph_output(NodeId id) const {
  auto it = std::lower_bound(outputs_.begin(), outputs_.end(), TensorRef{id, 0});
  return it != outputs_.end() && it->node == id;
}

bool GraphIndex::passes(const NodeTest& test, TensorRef t) const {
  const Node& n = g_.node(t.node);
  if (n.op != test.op || t.output != test.output || n.inputs.size() != test.arity) return false;
  // An operator without parameters may still lie outside the language at some attributes
  // (a transpose other than the 2-d one, a softmax over another axis): asked too.
  if (!test.op->attrs_to_params) return test.num_params == 0;
  const auto& vals = params(t.node);
  if (!vals || vals->size() != test.num_params) return false;
  for (auto& [pos, v] : test.literals)
    if ((*vals)[pos] != v) return false;
  return true;
}

const std::vector<NodeId>& GraphIndex::list(uint32_t id, const RootFilter& f,
                                            bool root_only) const {
  if (id >= lists_.size()) {
    lists_.resize(id + 1);
    lists_done_.resize(id + 1, 0);
  }
  if (lists_done_[id]) return lists_[id];
  std::vector<NodeId> out;
  if (root_only) {
    for (NodeId n : nodes_of(f.root.op->name))
      if (f.root.output < g_.node(n).outputs.size() && passes(f.root, {n, f.root.output}))
        out.push_back(n);
  } else {
    for (NodeId n : list(f.root_id, f, true)) {
      const auto& ins = g_.node(n).inputs;
      bool ok = true;
      for (size_t i = 0; i < f.args.size() && ok; ++i)
        ok = !f.args[i] || passes(*f.args[i], ins[i]);
      if (ok) out.push_back(n);
    }
  }
  lists_[id] = std::move(out);  // after the recursive call: it may grow lists_
  lists_done_[id] = 1;
  return lists_[id];
}

const std::vector<NodeId>& GraphIndex::candidates(const RootFilter& f) const {
  return list(f.id, f, f.id == f.root_id);
}

const std::optional<std::vector<AxiomParam>>& GraphIndex::params(NodeId id) const {
  if (!params_done_[id]) {
    const Node& n = g_.node(id);
    if (n.op->attrs_to_params) {
      std::vector<TensorType> in;
      in.reserve(n.inputs.size());
      for (auto r : n.inputs) in.push_back(g_.type(r));
      params_[id] = n.op->attrs_to_params(n.attrs, in);
    }
    params_done_[id] = 1;
  }
  return params_[id];
}

std::vector<NodeId> GraphIndex::users(TensorRef t) const {
  std::vector<NodeId> r;
  for (NodeId c : consumers_[t.node]) {
    const auto& ins = g_.node(c).inputs;
    if (std::find(ins.begin(), ins.end(), t) != ins.end()) r.push_back(c);
  }
  return r;
}

bool GraphIndex::only_used_by(TensorRef t, NodeId reader) const {
  if (is_graph_output(t)) return false;
  auto u = users(t);
  return u.size() == 1 && u[0] == reader;
}

bool GraphIndex::is_graph_output(TensorRef t) const {
  return std::binary_search(outputs_.begin(), outputs_.end(), t);
}

const std::vector<NodeId>& GraphIndex::nodes_of(const std::string& op) const {
  static const std::vector<NodeId> none;
  auto it = by_op_.find(op);
  return it == by_op_.end() ? none : it->second;
}

}  // namespace graphsub::opt
