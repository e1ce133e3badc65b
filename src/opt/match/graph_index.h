#pragma once
// Facts about one graph that every transform asks while looking for matches: who reads each
// node, which nodes compute only from weights and constants, which tensors are graph outputs,
// and the nodes of each operator. Built once per expanded graph and shared by all transforms.
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "opt/match/root_filter.h"

namespace graphsub::opt {

class GraphIndex {
 public:
  explicit GraphIndex(const Graph& g);

  const Graph& graph() const { return g_; }
  // Nodes that read some output of `id` (ascending, each once).
  const std::vector<NodeId>& consumers(NodeId id) const { return consumers_[id]; }
  // Nodes that read tensor `t` (ascending, each once).
  std::vector<NodeId> users(TensorRef t) const;
  // True when `t` is read by exactly `reader` and is not a graph output.
  bool only_used_by(TensorRef t, NodeId reader) const;
  bool is_graph_output(TensorRef t) const;
  // A weight, a constant, or an operator whose inputs are all constant: computed ahead of run
  // time (weight pre-computation), so it costs nothing.
  bool constant(NodeId id) const { return constant_[id] != 0; }
  bool constant(TensorRef t) const { return constant_[t.node] != 0; }
  const std::vector<uint8_t>& constant_flags() const { return constant_; }
  // Alive nodes of an operator, ascending.
  const std::vector<NodeId>& nodes_of(const std::string& op) const;
  // True when some alive operator node is not needed by any graph output (remove_dead would
  // drop it). Graphs a search builds never have such nodes; an input model may.
  bool has_dead_operators() const { return has_dead_; }
  // The same for any node but a graph input (an unread weight too): remove_dead would drop it.
  bool has_dead_nodes() const { return has_dead_nodes_; }
  // True when some output of `id` is a graph output.
  bool feeds_graph_output(NodeId id) const;
  // True when some alive node applies `op`.
  bool has_op(const OpDef* op) const { return op_set_.test(op_number(op)); }
  // The operators of alive nodes.
  const OpSet& op_set() const { return op_set_; }
  // Whether tensor t passes a pattern node's stateless test (operator, output, arity, literal
  // parameters).
  bool passes(const NodeTest& test, TensorRef t) const;
  // Alive nodes of the filter's root operator, ascending, whose output `root.output` passes the
  // root test and whose arguments pass theirs. Computed on first use and kept (the reference
  // stays valid for the index's lifetime).
  const std::vector<NodeId>& candidates(const RootFilter& f) const;
  // OpDef::attrs_to_params of an operator node (nullopt: outside the axiom language or no
  // such function). Computed on first use and kept: thousands of rules ask for the same node.
  const std::optional<std::vector<AxiomParam>>& params(NodeId id) const;

 private:
  const Graph& g_;
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<uint8_t> constant_;
  std::vector<TensorRef> outputs_;  // sorted
  std::map<std::string, std::vector<NodeId>, std::less<>> by_op_;
  bool has_dead_ = false;
  bool has_dead_nodes_ = false;
  OpSet op_set_;
  mutable std::vector<uint8_t> params_done_;
  mutable std::vector<std::optional<std::vector<AxiomParam>>> params_;
  // candidates() by interned filter id; a deque keeps earlier lists in place when it grows.
  mutable std::deque<std::vector<NodeId>> lists_;
  mutable std::vector<uint8_t> lists_done_;
  const std::vector<NodeId>& list(uint32_t id, const RootFilter& f, bool root_only) const;
};

// constant flags by node id for a whole graph (see GraphIndex::constant).
std::vector<uint8_t> constant_nodes(const Graph& g);

}  // namespace graphsub::opt
