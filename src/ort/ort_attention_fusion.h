#pragma once
// ONNX Runtime's fused attention operator (com.microsoft Attention) written in place of the
// multi-head attention that torch's nn.MultiheadAttention exports, which ONNX Runtime's own
// attention fusion does not recognize (it matches BERT-style graphs): one input projection
// MatMul + Add, its output sliced into Q, K and V along the last axis, each reshaped to
// [seq, batch*heads, head] and transposed, Q scaled by a constant (Div or Mul),
// Softmax(Q K^T), times V, transposed back. The fused node runs the projection, the scaled
// dot products and the softmax in one kernel.
//
// A file with com.microsoft operators runs in ONNX Runtime only: the caller decides whether
// to write it (an opt-in), checks it against the unfused file in ONNX Runtime and times it.
#include <cstdint>
#include <string>
#include <vector>

namespace graphsub {

struct AttentionFusion {
  std::string model_bytes;         // the rewritten model (the input when nothing matched)
  std::vector<std::string> sites;  // one line per fused attention: its Softmax node and sizes
};

// Fuses every match in the serialized model `model_bytes` (weights inline). Only exact
// matches are rewritten: constant projection weights [E, 3E] and bias [3E] (float),
// intermediate tensors read by nothing else, static head size, shapes that ONNX shape
// inference confirms. Throws Error naming `label` when the bytes are not a model.
AttentionFusion fuse_ort_attention(const std::string& model_bytes, const std::string& label);

}  // namespace graphsub
