#pragma once
// The evaluator's internals, shared by its files (internal to src/onnx/evaluate): element
// helpers and the evaluator of one node. shape_evaluator.cpp dispatches by operator;
// evaluate_elementwise.cpp and evaluate_shape.cpp hold the operators by family.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "onnx/evaluate/shape_evaluator.h"
#include "onnx/format/node_attrs.h"

namespace graphsub::evaluate {

using onnx::NodeProto;
using onnx::TensorProto;

// Results larger than this are left to the converters (they are data, not shapes).
constexpr int64_t kMaxFoldedElements = int64_t{1} << 20;

inline bool real_type(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::DOUBLE;
}

inline bool int_type(int32_t t) {
  switch (t) {
    case TensorProto::INT64:
    case TensorProto::INT32:
    case TensorProto::INT16:
    case TensorProto::INT8:
    case TensorProto::UINT8:
    case TensorProto::UINT16:
    case TensorProto::UINT32:
    case TensorProto::BOOL:
      return true;
    default:
      return false;
  }
}

// The value an integer of type `t` holds after a store (wrap-around as in C++ casts).
inline int64_t fit_int(int64_t v, int32_t t) {
  switch (t) {
    case TensorProto::INT32:
      return static_cast<int32_t>(v);
    case TensorProto::INT16:
      return static_cast<int16_t>(v);
    case TensorProto::INT8:
      return static_cast<int8_t>(v);
    case TensorProto::UINT8:
      return static_cast<uint8_t>(v);
    case TensorProto::UINT16:
      return static_cast<uint16_t>(v);
    case TensorProto::UINT32:
      return static_cast<uint32_t>(v);
    case TensorProto::BOOL:
      return v != 0;
    default:
      return v;
  }
}

inline double fit_real(double v, int32_t t) {
  return t == TensorProto::FLOAT ? static_cast<double>(static_cast<float>(v)) : v;
}

// Thrown inside the evaluator when a node's form is not handled; fold_node returns nullopt.
struct Unsupported {};

inline HostConstant make(int32_t type, Shape dims) {
  HostConstant c;
  c.elem_type = type;
  c.dims = std::move(dims);
  if (c.numel() > kMaxFoldedElements) throw Unsupported{};
  if (real_type(type))
    c.reals.assign(static_cast<size_t>(c.numel()), 0.0);
  else
    c.ints.assign(static_cast<size_t>(c.numel()), 0);
  return c;
}

inline std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// Advances a multi-index over `dims` in row-major order (the last dimension fastest).
inline void next_index(std::vector<int64_t>& idx, const Shape& dims) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < dims[d]) return;
    idx[d] = 0;
  }
}

// Copies element `from` of `src` to element `to` of `dst` (same element kind).
inline void copy_elem(const HostConstant& src, int64_t from, HostConstant& dst, int64_t to) {
  if (dst.real())
    dst.reals[static_cast<size_t>(to)] = src.reals[static_cast<size_t>(from)];
  else
    dst.ints[static_cast<size_t>(to)] = src.ints[static_cast<size_t>(from)];
}

class NodeEvaluator {
 public:
  NodeEvaluator(const NodeProto& n, const std::vector<const HostConstant*>& in, int64_t opset)
      : n_(n), in_(in), opset_(opset), label_(node_label(n)), at_(n, label_) {}

  std::vector<HostConstant> run();

 private:
  const HostConstant& need(size_t i) const {
    if (i >= in_.size() || !in_[i]) throw Unsupported{};
    return *in_[i];
  }
  bool has(size_t i) const { return i < in_.size() && in_[i]; }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}: {}", label_, what));
  }
  std::vector<int64_t> ints_of(size_t i) const {
    const HostConstant& c = need(i);
    if (c.real()) throw Unsupported{};
    return c.ints;
  }
  int64_t axis(int64_t a, int64_t rank) const { return onnx_axis(n_, a, rank); }
  // Axes from the attribute (before `from_opset`) or input `input`; nullopt when absent.
  std::optional<std::vector<int64_t>> axes(int64_t from_opset, size_t input) const {
    if (opset_ < from_opset) {
      if (!at_.has("axes")) return std::nullopt;
      return at_.ints("axes", {});
    }
    if (!has(input)) return std::nullopt;
    return ints_of(input);
  }

  Shape broadcast(const Shape& a, const Shape& b) const;
  std::vector<int64_t> broadcast_map(const Shape& in, const Shape& out) const;
  HostConstant elementwise();
  HostConstant where();
  HostConstant unary();
  HostConstant cast();
  HostConstant with_dims(const HostConstant& x, Shape dims) const;
  HostConstant reshape();
  HostConstant squeeze();
  HostConstant unsqueeze();
  HostConstant expand();
  HostConstant concat();
  HostConstant gather();
  HostConstant slice();
  HostConstant transpose();
  HostConstant scatter_nd();
  HostConstant pad();
  HostConstant range();
  HostConstant constant_of_shape();
  HostConstant reduce();
  HostConstant constant();

  const NodeProto& n_;
  const std::vector<const HostConstant*>& in_;
  int64_t opset_;
  std::string label_;
  NodeAttrs at_;
};

}  // namespace graphsub::evaluate
