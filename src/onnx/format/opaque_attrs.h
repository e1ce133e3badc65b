#pragma once
// How an opaque node keeps what it needs to be written back exactly: op_type and domain,
// attributes graphsub can hold natively (int, float, string, ints) as IR attributes, and
// every other attribute (tensors, graphs, float and string lists) serialized in one string
// attribute. Positions of absent optional inputs/outputs ("" in ONNX) are recorded too.
#include <onnx/onnx_pb.h>

#include <vector>

#include "core/attrs.h"

namespace graphsub {

inline constexpr const char* kOpaqueExtra = "onnx_extra";  // hex of a NodeProto
inline constexpr const char* kOpaqueAbsentIn = "onnx_absent_inputs";
inline constexpr const char* kOpaqueAbsentOut = "onnx_absent_outputs";
inline constexpr const char* kOpaqueOutTypes = "onnx_output_types";  // exact element types

// Attributes of the opaque IR node for an ONNX node (op_type and domain included).
Attrs encode_opaque_attrs(const onnx::NodeProto& n);
// Writes op_type, domain and attributes of an opaque IR node into `out`.
void decode_opaque_attrs(const Attrs& a, onnx::NodeProto& out);
// Input/output positions that were absent ("") in the ONNX node.
std::vector<int64_t> absent_positions(const Attrs& a, const char* key);

}  // namespace graphsub
