#pragma once
// Import-time evaluation of shape computations (internal to src/onnx). PyTorch exports
// compute Reshape targets, Expand shapes, Slice ends and Resize sizes at run time from
// Shape -> Gather -> Unsqueeze -> Concat chains on int64 tensors. For the concrete input
// shapes graphsub imports at, every such chain is a constant: this evaluator computes it
// exactly on host tensors (int64 arithmetic for integer and bool tensors, float or double
// for real ones), with ONNX's semantics, so that the operators reading the result get
// constant parameters. Operators outside its set, or inputs it does not hold, leave the
// node to the converters.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor_type.h"

namespace graphsub {

// Float results (and float initializers read) larger than this are left to the converters:
// they are data, not shape computations, and become weights folded at export if at all.
inline constexpr int64_t kMaxFoldedFloats = 4096;

// A constant tensor held by the importer. Integer and bool element types keep exact int64
// values in `ints`; FLOAT and DOUBLE keep `reals` (FLOAT values are rounded to float after
// every operation, as a float kernel would).
struct HostConstant {
  int32_t elem_type = 0;  // onnx::TensorProto_DataType
  Shape dims;
  std::vector<int64_t> ints;
  std::vector<double> reals;

  bool real() const;
  int64_t numel() const { return graphsub::numel(dims); }
};

// Whether the evaluator holds tensors of this element type.
bool host_type_supported(int32_t elem_type);

// The tensor's values (nullopt when its element type is not held or its data is external).
std::optional<HostConstant> host_constant(const onnx::TensorProto& t, const std::string& what);
// The constant as an initializer named `name`.
onnx::TensorProto to_tensor_proto(const HostConstant& c, const std::string& name);

// Whether the evaluator knows the operator (default ONNX domain).
bool foldable_op(const std::string& op_type);

// Evaluates node `n` on constant inputs (null for absent optional inputs). Shape and Size
// read only the dims of their input. Returns nullopt when this node's form is outside the
// evaluator (an attribute or type it does not handle); throws Error naming the node on
// inputs that ONNX rejects (indices out of range, incompatible broadcasts, division by zero).
std::optional<std::vector<HostConstant>> fold_node(const onnx::NodeProto& n,
                                                   const std::vector<const HostConstant*>& in,
                                                   int64_t opset);

}  // namespace graphsub
