#pragma once
// float16 and bfloat16 models. graphsub's kernels compute in float32, which holds every
// float16 and bfloat16 value exactly, so a model whose floating-point tensors are all of one
// half type is imported as float32 (each value widened exactly), searched and checked there,
// and written back in its own type (each value rounded to nearest even: exact for the weights
// the search left alone). A model mixing float32 with a half type keeps its half-typed nodes
// opaque, exactly as they are, and the import summary reports them by op type.
#include <onnx/onnx_pb.h>

#include <cstdint>

namespace graphsub {

// The half type (TensorProto::FLOAT16 or BFLOAT16) of a model whose floating-point tensors all
// have it (graph inputs, outputs, value_info, initializers, Constant values and Cast targets,
// in subgraphs too); FLOAT for a float32 model and for one that mixes types.
int32_t uniform_half_type(const onnx::ModelProto& m);

// Rewrites every tensor of type `half` into FLOAT, values widened exactly. Initializers must
// be inline (external data already read).
void widen_half_model(onnx::ModelProto& m, int32_t half);

// The reverse for a written model: every FLOAT tensor becomes `half` (rounded to nearest
// even), except the operands ONNX requires as float32 (Resize's and Upsample's scales).
void narrow_to_half(onnx::ModelProto& m, int32_t half);

// One value through the half type and back: the rounding a written model applies.
float round_to_half(float v, int32_t half);

}  // namespace graphsub
