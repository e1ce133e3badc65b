#pragma once
// Pre-computes weight-only subgraphs before export: every operator whose inputs are all
// constants (weights with data, constant sources such as const_iconv) becomes one weight
// holding its value, computed once with the reference kernels. Opaque operators are left
// alone (graphsub does not know what they compute).
#include <cstddef>

#include "ir/graph.h"

namespace graphsub {

// Returns the number of operators folded. Weights created are named after the folded node.
size_t fold_constants(Graph& g);

}  // namespace graphsub
