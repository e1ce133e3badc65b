#pragma once
// The runtimes' operators in ONNX files: which node (domain, op_type) each fused operator of
// src/ops/fused_ops.cpp is, which of the node's outputs each IR output is, and the attributes
// that must keep one value for graphsub to read the node. One table, read by the importer and
// the exporter; IR attributes carry the node's attribute names, so both copy them by name.
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace graphsub {

// A node input that must be an integer constant, held by the IR operator as an ints
// attribute of the same name and written back as an initializer.
struct IntInput {
  enum class Layout : uint8_t {
    PositionIds,  // int64 [first axis of input 0, the rest], or [1] for a single value
    PerBatch32,   // int32 [first axis of input 0]
    Scalar32,     // int32 scalar
  };
  int at = 0;             // the node input's position
  std::string_view name;  // the attribute's name
  Layout layout = Layout::PositionIds;
};

// An optional input the IR operator tells apart from the others by its rank.
struct RankedInput {
  int at = 0;    // the node input's position
  int rank = 0;  // the rank of the tensor it takes
};

struct RuntimeOperator {
  std::string_view domain;   // "com.microsoft"; "" for one ONNX Runtime puts in ONNX's domain
  std::string_view op_type;  // "SkipLayerNormalization"
  std::string_view ir;       // "ort_skip_layernorm"
  int64_t domain_version = 1;
  // outputs[k]: the node output that IR output k is; other node outputs are not read.
  std::vector<int> outputs{0};
  // Attributes the IR operator has no field for, with the only value graphsub reads.
  std::vector<std::pair<std::string_view, int64_t>> fixed;
  // Optional inputs that an importer fills with zeros when absent before a given one
  // (SkipLayerNormalization's beta, when a bias follows).
  std::vector<int> zero_when_absent;
  // Inputs that must be integer constants (RotaryEmbedding's position ids,
  // GroupQueryAttention's sequence lengths), in increasing order of position.
  std::vector<IntInput> int_inputs;
  // Optional inputs placed by rank (MultiHeadAttention's bias and attention bias): the IR
  // operator holds the given ones after its required inputs, in the node's order, and each is
  // written at the position of its rank, the positions between left absent. A node with an
  // optional input at another position is not read. Empty: the IR's inputs are the node's.
  std::vector<RankedInput> ranked_inputs;
  // False for a node read into a portable IR operator that is written in the default domain.
  bool written = true;
  // Non-empty for a node that is an ONNX operator followed by its `activation` attribute
  // (FusedConv is Conv, FusedGemm is Gemm): read by that operator's converter, then the
  // activation as graphsub's own operator; written back in ONNX's domain (not `written`).
  std::string_view read_as;
};

// The operator of node (domain, op_type), or null; `domain` "" or "ai.onnx" is ONNX's.
const RuntimeOperator* find_runtime_operator(std::string_view domain, std::string_view op_type);
// The node IR operator `ir` is written as, or null (also for one read from a runtime's node
// but written in the default domain: com.microsoft Gelu is read as gelu).
const RuntimeOperator* runtime_operator_of(std::string_view ir);

}  // namespace graphsub
