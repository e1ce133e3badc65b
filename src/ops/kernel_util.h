#pragma once
// Small helpers shared by the operator family files.
#include <fmt/format.h>

#include <span>
#include <vector>

#include "ir/error.h"
#include "ops/op_def.h"
#include "ops/scalar.h"

namespace graphsub {

// Normalises a possibly negative axis against a rank; throws naming the operator.
int64_t norm_axis(const char* op, int64_t axis, int64_t rank);

// Row-major strides of a shape.
std::vector<int64_t> strides_of(const Shape& s);

// Numpy-style broadcast of two shapes; throws when incompatible.
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);

// Output type of an operator that keeps its first input's type (split metadata included).
inline std::vector<TensorType> same_as_first(const Attrs&, std::span<const TensorType> in) {
  return {in[0]};
}

// Cost of an operator that reads its inputs and writes its outputs once, with `per_elem`
// arithmetic operations per output element.
OpCost streaming_cost(std::span<const TensorType> in, std::span<const TensorType> out,
                      double per_elem);

inline AttrSpec act_attr() {
  return {"act", AttrKind::String, AttrValue{std::string("none")}, {"none", "relu", "sigmoid", "tanh"}};
}

}  // namespace graphsub
