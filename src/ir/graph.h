#pragma once
// The graph IR. Nodes are immutable once shared: a Graph holds shared pointers to them, so a
// copy of a graph costs one pointer copy per node and edits clone only the nodes they touch.
// Graph inputs and weights are source nodes; every tensor is (node, output index).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/attrs.h"
#include "core/tensor_type.h"
#include "ops/op_def.h"

namespace graphsub {

using NodeId = uint32_t;

struct TensorRef {
  NodeId node = 0;
  uint32_t output = 0;
  friend bool operator==(const TensorRef&, const TensorRef&) = default;
  friend auto operator<=>(const TensorRef&, const TensorRef&) = default;
};

using WeightData = std::shared_ptr<const std::vector<float>>;

struct Node {
  const OpDef* op = nullptr;
  Attrs attrs;
  std::vector<TensorRef> inputs;
  std::vector<TensorType> outputs;
  std::string name;  // graph input / weight name, or the ONNX node name (may be empty)
  WeightData data;   // weights only; null for a weight known by shape alone

  bool is_source() const { return op->cls == OpClass::Source; }
  bool is_input() const;   // graph input (fed at run time)
  bool is_weight() const;  // weight (constant at run time)
};

struct GraphOutput {
  std::string name;
  TensorRef ref;
};

// How a graph differs from another it was derived from by edits (a base): the node slots
// whose node object is not the base's very one (nullptr: removed), the table size, and the
// outputs. A search keeps thousands of graphs that differ from a shared base in a few nodes;
// as patches they take memory in proportion to what changed, not to the graph's size.
struct GraphPatch {
  size_t num_slots = 0;
  std::vector<std::pair<NodeId, std::shared_ptr<const Node>>> nodes;  // ascending ids
  std::vector<GraphOutput> outputs;
};

class Graph {
 public:
  // Adds an operator after checking attributes and arity and inferring output types.
  // Throws Error naming the node, the operator and the input shapes on failure.
  NodeId add(const OpDef& op, std::vector<TensorRef> inputs, Attrs attrs = {},
             std::string name = {});
  NodeId add(std::string_view op, std::vector<TensorRef> inputs, Attrs attrs = {},
             std::string name = {});
  // Adds a node whose inputs may not exist yet (importers reading nodes in any order);
  // output types come from infer_all(), which also finds cycles.
  NodeId add_unchecked(const OpDef& op, std::vector<TensorRef> inputs, Attrs attrs,
                       std::string name, size_t num_outputs);
  NodeId add_input(std::string name, TensorType type);
  NodeId add_weight(std::string name, TensorType type, WeightData data = nullptr);
  // Opaque operator: shapes given, semantics unknown.
  NodeId add_opaque(std::string op_type, std::vector<TensorRef> inputs,
                    std::vector<TensorType> outputs, Attrs attrs = {}, std::string name = {});
  void add_output(std::string name, TensorRef ref);

  const Node& node(NodeId id) const { return *nodes_[id]; }
  bool alive(NodeId id) const { return id < nodes_.size() && nodes_[id] != nullptr; }
  size_t num_slots() const { return nodes_.size(); }
  size_t num_nodes() const;  // alive nodes, sources included
  size_t num_ops() const;    // alive non-source nodes
  const TensorType& type(TensorRef r) const { return nodes_[r.node]->outputs[r.output]; }
  const std::vector<GraphOutput>& outputs() const { return outputs_; }
  std::vector<NodeId> inputs() const;   // graph input nodes, in insertion order
  std::vector<NodeId> weights() const;  // weight nodes, in insertion order

  // Edits.
  void remove(NodeId id);                           // leaves a hole; ids stay stable
  void replace_uses(TensorRef from, TensorRef to);  // node inputs and graph outputs
  // The same when only the nodes in `readers` (alive or not, any order) can read `from`: the
  // others are not looked at, so the edit costs the readers, not the graph's size.
  void replace_uses(TensorRef from, TensorRef to, const std::vector<NodeId>& readers);
  void set_inputs(NodeId id, std::vector<TensorRef> inputs);
  void set_weight_data(NodeId id, WeightData data);
  void set_output_type(TensorRef r, TensorType t);
  void remove_dead();  // removes operators that no graph output depends on
  void compact();      // renumbers nodes in topological order, dropping holes

  // Re-infers every node's output types in topological order (throws on cycles or errors).
  void infer_all();
  // Topological order of alive nodes; deterministic (by id among ready nodes); throws on cycle.
  std::vector<NodeId> topo_order() const;
  // consumers[id] = nodes that read some output of id (each listed once, ascending).
  std::vector<std::vector<NodeId>> consumers() const;

  // The patch that turns `base` into this graph (base.patched(diff_from(base)) equals it,
  // sharing every node object). Linear in the table size; the patch holds only what differs.
  GraphPatch diff_from(const Graph& base) const;
  Graph patched(const GraphPatch& patch) const;

  std::string describe(NodeId id) const;  // "node 7 'conv_1' (conv, inputs f32[1,3,8,8] ...)"

 private:
  NodeId push(Node n);
  Node& edit(NodeId id);  // clones the node if shared with another graph
  void replace_in(NodeId id, TensorRef from, TensorRef to);  // one node's inputs
  std::vector<std::shared_ptr<const Node>> nodes_;
  std::vector<GraphOutput> outputs_;
};

// Throws Error on: dangling tensor references, cycles, arity or attribute errors, shape
// mismatches (re-inferred types must equal the stored ones), duplicate names of inputs/outputs.
void validate(const Graph& g);

}  // namespace graphsub
