#pragma once
// Weight pre-computation, the one constant folder of the graph IR: every operator whose
// inputs are all weights with data or generator constants (enlarged kernels, concatenated
// weights, folded batchnorm scales, block-diagonal group weights) is computed once with its
// reference kernel and replaced by a weight holding the values. The optimizer runs it on
// its result and the ONNX exporter before writing. (Shape computations on int64 tensors are
// evaluated earlier, at import: src/onnx/evaluate/shape_evaluator.h.)
#include <cstddef>

#include "ir/graph.h"

namespace graphsub {

// Returns the number of operators folded. Operators reading a weight without data, opaque
// operators and operators without a reference kernel are left in place. Generator constants
// (const_pool, const_iconv, ...) read by an operator that is not folded stay generators,
// unless `generators_too`: then they become weights too (the exporter: ONNX has no such
// operators).
size_t precompute_weights(Graph& g, bool generators_too = false);

}  // namespace graphsub
