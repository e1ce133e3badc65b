#pragma once
// One application of a transform: start from a copy of the graph (cheap: nodes are shared
// copy-on-write), add the replacement nodes, then replace each matched output tensor by its
// replacement. finish() refuses results whose replacement types differ from the replaced
// ones (shape, dtype, layout or split points), keeps graph outputs in place, and drops the
// nodes nothing reads any more.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace graphsub::opt {

struct Replacement {
  TensorRef from;  // a tensor of the original graph
  TensorRef to;    // the tensor that computes the same values in the new graph
};

class Rewrite {
 public:
  explicit Rewrite(const Graph& g) : g_(g), first_new_(g.num_slots()) {}

  // Add nodes here (Graph::add checks attributes and infers types; it throws Error).
  Graph& graph() { return g_; }
  // A weight holding `data`, named after `base` but unique in the graph.
  TensorRef add_weight(const std::string& base, TensorType type, std::vector<float> data);

  // nullopt when a replacement's type differs from the tensor it replaces.
  std::optional<Graph> finish(const std::vector<Replacement>& replacements) &&;

 private:
  Graph g_;
  NodeId first_new_;
};

// False when the graph has a cycle.
bool acyclic(const Graph& g);

}  // namespace graphsub::opt
