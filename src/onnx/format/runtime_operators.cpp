#include "onnx/format/runtime_operators.h"

namespace graphsub {
namespace {

constexpr std::string_view kMs = "com.microsoft";

const std::vector<RuntimeOperator>& table() {
  static const std::vector<RuntimeOperator> t = {
      {.domain = kMs, .op_type = "BiasGelu", .ir = "ort_bias_gelu"},
      {.domain = kMs, .op_type = "FastGelu", .ir = "ort_fast_gelu"},
      {.domain = kMs, .op_type = "QuickGelu", .ir = "ort_quick_gelu"},
      {.domain = kMs,
       .op_type = "FusedMatMul",
       .ir = "ort_fused_matmul",
       .fixed = {{"transBatchA", 0}, {"transBatchB", 0}}},
      {.domain = kMs,
       .op_type = "SkipLayerNormalization",
       .ir = "ort_skip_layernorm",
       .outputs = {0, 3},
       .zero_when_absent = {3}},
      // Q, K and V of [batch, sequence, hidden], the projections' bias and the attention bias
      // (added to the scores); key padding masks, past keys and values and the packed forms
      // stay opaque.
      {.domain = kMs,
       .op_type = "MultiHeadAttention",
       .ir = "ort_mha",
       .ranked_inputs = {{.at = 3, .rank = 1}, {.at = 5, .rank = 4}}},
      // BERT's form: the input, one packed QKV weight and its bias; mask indices, past
      // states, attention biases and rotary embeddings stay opaque.
      {.domain = kMs,
       .op_type = "Attention",
       .ir = "ort_attention",
       .fixed = {{"do_rotary", 0}, {"past_present_share_buffer", 0}, {"rotary_embedding_dim", 0}}},
      // Rotary embedding with constant position ids (input 1): [batch, sequence], or [1],
      // the first position of every batch's sequence. Packed batching stays opaque.
      {.domain = kMs,
       .op_type = "RotaryEmbedding",
       .ir = "ort_rotary_embedding",
       .fixed = {{"is_packed_batching", 0}},
       .int_inputs = {{.at = 1, .name = "position_ids"}}},
      // Causal attention over a key/value cache with grouped heads: Q, K, V and the past key
      // and value, the sequences unpadded (seqlens_k and total_sequence_length the cache's
      // length). The packed QKV form, the rotary embedding inside, position ids, attention
      // biases, head sinks and the QK output stay opaque.
      {.domain = kMs,
       .op_type = "GroupQueryAttention",
       .ir = "ort_gqa",
       .outputs = {0, 1, 2},
       .fixed =
           {{"do_rotary", 0}, {"rotary_interleaved", 0}, {"smooth_softmax", 0}, {"qk_output", 0}},
       .int_inputs = {{.at = 5, .name = "seqlens_k", .layout = IntInput::Layout::PerBatch32},
                      {.at = 6,
                       .name = "total_sequence_length",
                       .layout = IntInput::Layout::Scalar32}}},
      {.domain = kMs,
       .op_type = "SkipSimplifiedLayerNormalization",
       .ir = "ort_skip_simplified_layernorm",
       .outputs = {0, 3}},
      // ONNX Runtime registers this one in ONNX's domain (version 1), where onnx::checker
      // refuses it: read, and written as rms_norm is (RMSNormalization from opset 23, its
      // function body before, which ONNX Runtime fuses back into this node).
      {.domain = "",
       .op_type = "SimplifiedLayerNormalization",
       .ir = "ort_simplified_layernorm",
       .written = false},
      // ONNX's Conv and Gemm with an activation, as ONNX Runtime's optimizer writes them at
      // level extended: graphsub's conv and matmul carry the activation themselves, and the
      // plain nodes written back are fused again by ONNX Runtime. FusedConv's Z (a sum
      // before the activation) stays opaque.
      {.domain = kMs, .op_type = "FusedConv", .ir = "conv", .written = false, .read_as = "Conv"},
      {.domain = kMs, .op_type = "FusedGemm", .ir = "matmul", .written = false, .read_as = "Gemm"},
      // ONNX Runtime's exact Gelu, older than ONNX's own (opset 20): read as gelu, written in
      // the default domain.
      {.domain = kMs, .op_type = "Gelu", .ir = "gelu", .written = false},
  };
  return t;
}

}  // namespace

const RuntimeOperator* find_runtime_operator(std::string_view domain, std::string_view op_type) {
  if (domain == "ai.onnx") domain = "";
  for (const auto& r : table())
    if (r.domain == domain && r.op_type == op_type) return &r;
  return nullptr;
}

const RuntimeOperator* runtime_operator_of(std::string_view ir) {
  for (const auto& r : table())
    if (r.ir == ir && r.written) return &r;
  return nullptr;
}

}  // namespace graphsub
