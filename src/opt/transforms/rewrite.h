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
#include "opt/match/graph_index.h"

namespace graphsub::opt {

struct Replacement {
  TensorRef from;  // a tensor of the original graph
  TensorRef to;    // the tensor that computes the same values in the new graph
};

class Rewrite {
 public:
  explicit Rewrite(const Graph& g) : g_(g), first_new_(g.num_slots()) {}
  // With the graph's index, finish() looks only at the readers the index lists for the
  // replaced tensors and at the new nodes (the same result, in time proportional to the
  // rewrite instead of the graph's size: a search of a 100,000-node model builds thousands of
  // candidates per graph). `ix` must outlive the Rewrite.
  explicit Rewrite(const GraphIndex& ix) : g_(ix.graph()), first_new_(g_.num_slots()), ix_(&ix) {}

  // Add nodes here (Graph::add checks attributes and infers types; it throws Error).
  Graph& graph() { return g_; }
  // A weight holding `data`, named after `base` but unique in the graph.
  TensorRef add_weight(const std::string& base, TensorType type, std::vector<float> data);

  // nullopt when a replacement's type differs from the tensor it replaces.
  std::optional<Graph> finish(const std::vector<Replacement>& replacements) &&;

 private:
  std::optional<Graph> finish_near(const std::vector<Replacement>& replacements);
  // Drops the nodes that no graph output needs any more, starting from `suspects` (the nodes
  // that lost readers) and going up: the parent had no dead nodes, so no others can be.
  void remove_dead_from(std::vector<NodeId> suspects, const std::vector<NodeId>& touched);

  Graph g_;
  NodeId first_new_;
  const GraphIndex* ix_ = nullptr;
};

// False when the graph has a cycle.
bool acyclic(const Graph& g);

}  // namespace graphsub::opt
