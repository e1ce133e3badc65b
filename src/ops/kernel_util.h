#pragma once
// Small helpers shared by the operator family files.
#include <fmt/format.h>

#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "ops/op_def.h"
#include "ops/scalar.h"

namespace graphsub {

// Normalises a possibly negative axis against a rank; throws naming the operator.
int64_t norm_axis(const char* op, int64_t axis, int64_t rank);

// Row-major strides of a shape.
std::vector<int64_t> strides_of(const Shape& s);

// Calls f(i, j) for every element i of a row-major tensor of shape `out` with the index j of
// the element of `operand` (a shape that broadcasts to `out`) it reads.
template <class F>
void for_each_broadcast(const Shape& out, const Shape& operand, F f) {
  size_t r = out.size();
  std::vector<int64_t> st(r, 0), own = strides_of(operand);
  for (size_t i = 0; i < operand.size(); ++i)
    if (operand[i] != 1) st[r - operand.size() + i] = own[i];
  std::vector<int64_t> idx(r, 0);
  int64_t n = numel(out), j = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(i, j);
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {  // odometer increment
      j += st[d];
      if (++idx[d] < out[d]) break;
      j -= st[d] * out[d];
      idx[d] = 0;
    }
  }
}

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

// An output type with `src`'s dtype, the given shape, default layout and no split points.
inline TensorType derived_type(const TensorType& src, Shape shape) {
  TensorType t;
  t.dtype = src.dtype;
  t.shape = std::move(shape);
  return t;
}

// Requires an `ints` attribute of exactly `n` values, each >= `min`; returns it.
const std::vector<int64_t>& ints_of_size(const char* op, const Attrs& a, const char* name, size_t n,
                                         int64_t min);

// Requires a tensor of the given rank; `what` names the operand ("input", "weight").
void require_rank(const char* op, const char* what, const TensorType& t, int64_t rank);

// Cost of an operator that only moves data: no arithmetic, inputs read and outputs written once.
OpCost copy_cost(const Attrs&, std::span<const TensorType> in, std::span<const TensorType> out);
// Cost of a view (reshape, flatten): free at run time.
inline OpCost free_cost(const Attrs&, std::span<const TensorType>, std::span<const TensorType>) {
  return {};
}

// The axiom symbol of an integer or string parameter, with a clear error otherwise.
int64_t param_int(const char* op, std::span<const AxiomParam> p, size_t i);
const std::string& param_symbol(const char* op, std::span<const AxiomParam> p, size_t i);

// Axiom binding of a square `kernel` parameter (enlarge, cpool, iconv): k <-> kernel=[k,k].
Attrs square_kernel_attrs(std::span<const AxiomParam> p, std::span<const TensorType> in);
std::optional<std::vector<AxiomParam>> square_kernel_params(const Attrs& a,
                                                            std::span<const TensorType> in);

// ---- composing kernels: a fused or composite operator's reference kernel runs the primitive
// kernels its axiom names (src/ops/fused_ops.cpp, attention_ops.cpp), so the two cannot drift ----

// Runs primitive `op`'s registered kernel on one output.
template <class T>
void run_primitive(std::string_view op, const Attrs& a, std::vector<TensorType> in_t,
                   std::vector<const T*> in, const TensorType& out_t, T* out) {
  const OpDef& d = op_def(op);
  std::vector<TensorType> out_types{out_t};
  std::vector<T*> outs{out};
  KernelIO<T> io{a, in_t, out_types, in, outs};
  if constexpr (std::is_same_v<T, float>)
    d.kernel_f32(io);
  else
    d.kernel_u32(io);
}

// A zeroed buffer for a tensor of type `t`.
template <class T>
std::vector<T> buffer(const TensorType& t) {
  return std::vector<T>(static_cast<size_t>(t.numel()));
}

// A float attribute as a factor: the value itself, and for uint32 fingerprints 1 at 1 (so that
// a scale of 1 is the identity there too) and an odd code of the value's bits otherwise.
template <class T>
T factor(double v) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(v);
  } else {
    if (v == 1.0) return 1u;
    float f = static_cast<float>(v);
    uint32_t b = 0;
    std::memcpy(&b, &f, sizeof b);
    return (b * 2654435761u) | 1u;
  }
}

// Attribute specs, required or with a default. Built out of line, by emplacing the default:
// moving a temporary AttrValue into the spec trips GCC 12's -Wmaybe-uninitialized in
// sanitizer builds.
AttrSpec required_attr(const char* name, AttrKind kind);
AttrSpec int_attr(const char* name, int64_t def);
AttrSpec float_attr(const char* name, double def);
AttrSpec ints_attr(const char* name, std::vector<int64_t> def = {});
AttrSpec act_attr();  // "act": none (default) or one of fused_activations()
// Whether an `act` value belongs to the act domain of specs/operators.axioms (a conv or
// matmul with another fused activation lies outside the axiom language).
bool act_in_axiom_language(const std::string& act);

}  // namespace graphsub
