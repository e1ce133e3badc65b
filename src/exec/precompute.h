#pragma once
// Weight pre-computation: every operator whose inputs are all weights with data or
// generator constants (enlarged kernels, concatenated weights, folded batchnorm scales,
// block-diagonal group weights) is computed once with its reference kernel and replaced by a
// weight holding the values. The optimized graph then runs none of them.
#include <cstddef>

#include "ir/graph.h"

namespace graphsub::opt {

// Returns the number of operators folded. Operators reading a weight without data are left
// in place (their values are unknown until run time).
size_t precompute_weights(Graph& g);

}  // namespace graphsub::opt
