#pragma once
// Each operator family file defines its operators once and appends them here. Adding an
// operator means adding one entry to its family's file.
#include <vector>

#include "ops/op_def.h"

namespace graphsub {

void register_source_ops(std::vector<OpDef>& defs);       // input, weight, constants
void register_elementwise_ops(std::vector<OpDef>& defs);  // ewadd, add, relu, relu6, silu, ...
void register_activation_ops(std::vector<OpDef>& defs);   // clip, hardsigmoid, prelu, ...
void register_index_ops(std::vector<OpDef>& defs);        // expand, gather, resize
void register_linear_ops(std::vector<OpDef>& defs);       // matmul, transpose
void register_conv_pool_ops(std::vector<OpDef>& defs);    // conv, enlarge, pools
void register_shape_ops(std::vector<OpDef>& defs);        // concat, split
void register_reshape_ops(std::vector<OpDef>& defs);      // reshape, flatten, pad, slice
void register_norm_ops(std::vector<OpDef>& defs);         // batchnorm, softmax, layernorm, reduce
void register_opaque_ops(std::vector<OpDef>& defs);       // opaque
void register_fused_ops(std::vector<OpDef>& defs);        // runtimes' fused kernels
void register_attention_ops(std::vector<OpDef>& defs);    // ONNX's Attention (opset 23)
void register_rotary_ops(std::vector<OpDef>& defs);       // ONNX's RotaryEmbedding (opset 23)
void register_ort_gqa_ops(std::vector<OpDef>& defs);      // ONNX Runtime's GroupQueryAttention

}  // namespace graphsub
