#pragma once
// Conversions between onnx::TensorProto and plain values, element-type mapping, and external
// data. Internal to src/onnx (the only stage that sees protobuf types).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor_type.h"

namespace graphsub {

// The IR element type used for an ONNX element type. Types the IR lacks map to one of the
// same width (only costs look at them: operators with semantics take float tensors only).
DType dtype_from_onnx(int32_t elem_type);
int32_t onnx_from_dtype(DType t);
std::string onnx_type_name(int32_t elem_type);
bool onnx_type_valid(int32_t elem_type);

// Dims of a tensor; throws Error (naming `what`) on negative dims.
Shape tensor_dims(const onnx::TensorProto& t, const std::string& what);

// Values of a FLOAT tensor, checked against its dims.
std::vector<float> tensor_floats(const onnx::TensorProto& t, const std::string& what);
// Values of an INT64 or INT32 tensor, checked against its dims.
std::vector<int64_t> tensor_ints(const onnx::TensorProto& t, const std::string& what);

onnx::TensorProto make_float_tensor(const std::string& name, const Shape& shape,
                                    std::span<const float> values);
onnx::TensorProto make_int64_tensor(const std::string& name, const Shape& shape,
                                    std::span<const int64_t> values);
// An INT32 tensor of int64 values; throws Error naming the tensor when one does not fit.
onnx::TensorProto make_int32_tensor(const std::string& name, const Shape& shape,
                                    std::span<const int64_t> values);
onnx::TensorProto make_float_scalar(const std::string& name, float v);

// Bytes of one element of an ONNX element type; 0 for strings and types without a fixed size.
int64_t onnx_elem_size(int32_t elem_type);

// The file an external-data location names: a relative path below `base_dir` (no "..", not
// absolute) that, with every symbolic link resolved, still lies below the resolved
// `base_dir`. Throws Error naming `what` and the location otherwise.
std::string resolve_external_location(const std::string& location, const std::string& base_dir,
                                      const std::string& what);

// Reads external data into the tensor (raw_data) and marks it as stored inline; returns the
// resolved file read ("" when the data was inline already). The file must be a regular file
// (resolve_external_location); the range must lie in it and match the tensor's shape and
// element type, checked before reading. `base_dir` "" forbids external data. Throws Error
// naming the tensor and file.
std::string inline_external_data(onnx::TensorProto& t, const std::string& base_dir);

// Bytes of the tensor's data when serialized (raw form).
int64_t tensor_byte_size(const onnx::TensorProto& t);

}  // namespace graphsub
