#pragma once
// Floating-point operations of one run of a graph, from each operator's cost definition
// (shared by the executor benchmarks).
#include <vector>

#include "ir/graph.h"
#include "ops/op_def.h"

namespace graphsub::bench {

inline double graph_flops(const Graph& g) {
  double f = 0;
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    if (n.is_source()) continue;
    std::vector<TensorType> in;
    for (auto r : n.inputs) in.push_back(g.type(r));
    f += op_cost(*n.op, n.attrs, in, n.outputs).flops;
  }
  return f;
}

}  // namespace graphsub::bench
