// The operator versions the importer reads. Each list was checked against the operator's
// change log in the pinned ONNX release: a version is listed when the converter (or the
// import-time evaluator) reads exactly that form, or when it differs from a listed one only in
// the element types it allows (most versions from 19 on: float8, int4, bfloat16). Adding a
// version means reading its form; a missing one only costs an opaque node.
#include "onnx/format/operator_versions.h"

#include <onnx/defs/schema.h>

#include <map>
#include <set>

#include "onnx/onnx_model.h"

namespace graphsub {
namespace {

const std::map<std::string, std::set<int64_t>>& read_versions() {
  static const std::map<std::string, std::set<int64_t>> table = {
      // Elementwise arithmetic: multidirectional broadcasting from 7 (graphsub reads 7 on).
      {"Add", {7, 13, 14}},
      {"Sub", {7, 13, 14}},
      {"Mul", {7, 13, 14}},
      {"Div", {7, 13, 14}},
      {"Sum", {6, 8, 13}},  // of two inputs; 6: no broadcasting, a special case of 8's
      {"Pow", {7, 12, 13, 15}},
      {"Mod", {10, 13}},
      {"Min", {6, 8, 12, 13}},  // 6: no broadcasting, a special case of 8's
      {"Max", {6, 8, 12, 13}},
      // Unary functions.
      {"Relu", {6, 13, 14}},
      {"Sigmoid", {6, 13}},
      {"Tanh", {6, 13}},
      {"Erf", {9, 13}},
      {"Exp", {6, 13}},
      {"Sqrt", {6, 13}},
      {"Neg", {6, 13}},
      {"Abs", {6, 13}},
      {"Floor", {6, 13}},
      {"Ceil", {6, 13}},
      {"Reciprocal", {6, 13}},
      {"Not", {1}},
      {"Gelu", {20}},
      {"Clip", {6, 11, 12, 13}},  // 6: bounds as attributes; 11 on: as inputs
      {"HardSigmoid", {6, 22}},
      {"HardSwish", {14, 22}},
      {"LeakyRelu", {6, 16}},
      {"PRelu", {7, 9, 16}},
      // Comparisons and logic (evaluated at import only).
      {"Equal", {7, 11, 13, 19}},
      {"Less", {7, 9, 13}},
      {"Greater", {7, 9, 13}},
      {"LessOrEqual", {12, 16}},
      {"GreaterOrEqual", {12, 16}},
      {"And", {7}},
      {"Or", {7}},
      {"Xor", {7}},
      {"Where", {9, 16}},
      // Linear algebra, convolution, pooling, normalization.
      {"Gemm", {7, 9, 11, 13}},
      {"MatMul", {1, 9, 13}},
      {"Conv", {1, 11, 22}},
      {"MaxPool", {1, 8, 10, 11, 12, 22}},   // ceil_mode from 10 (absent before: floor)
      {"AveragePool", {7, 10, 11, 19, 22}},  // dilations from 19 (declined unless 1)
      {"GlobalAveragePool", {1, 22}},
      {"GlobalMaxPool", {1, 22}},
      {"BatchNormalization", {7, 9, 14, 15}},  // 7: `spatial` (declined unless 1)
      {"LayerNormalization", {17}},
      {"RMSNormalization", {23}},
      {"Attention", {23, 24}},   // 24 adds the padding lengths (declined when given)
      {"RotaryEmbedding", {23}},
      {"Softmax", {1, 11, 13}},  // before 13: over the flattened axes from `axis` on
      // Reductions: axes as an attribute, then an input (ReduceSum from 13, the others from 18).
      {"ReduceMean", {1, 11, 13, 18}},
      {"ReduceSum", {1, 11, 13}},
      {"ReduceProd", {1, 11, 13, 18}},
      {"ReduceMin", {1, 11, 12, 13, 18, 20}},
      {"ReduceMax", {1, 11, 12, 13, 18, 20}},
      // Indexing and layout.
      {"Expand", {8, 13}},
      {"Gather", {1, 11, 13}},
      {"Resize", {11, 13, 18, 19}},  // 10 (scales as input 1, no coordinate modes) is opaque
      {"Concat", {4, 11, 13}},
      {"Split", {2, 11, 13, 18}},  // 18: num_outputs, the last part may be smaller
      {"Slice", {1, 10, 11, 13}},  // 1: starts, ends and axes as attributes
      {"Reshape", {5, 13, 14, 19, 21, 23, 24, 25}},
      {"Flatten", {1, 9, 11, 13, 21, 23, 24, 25}},
      {"Transpose", {1, 13, 21, 23, 24, 25}},
      {"Squeeze", {1, 11, 13, 21, 23, 24, 25}},
      {"Unsqueeze", {1, 11, 13, 21, 23, 24, 25}},
      {"Pad", {2, 11, 13, 18, 19, 21, 23, 24, 25}},  // 2: pads as an attribute; 18: axes input
      {"Identity", {1, 13, 14, 16, 19, 21, 23, 24, 25}},
      {"Dropout", {7, 10, 12, 13, 22}},
      {"Constant", {1, 9, 11, 12, 13, 19, 21, 23, 24, 25}},
      {"Shape", {1, 13, 15, 19, 21, 23, 24, 25}},  // start and end from 15
      {"Size", {1, 13, 19, 21, 23, 24, 25}},
      {"Cast", {6, 9, 13, 19, 21, 23, 24, 25}},
      {"Range", {11}},
      {"ConstantOfShape", {9, 20, 21, 23, 24, 25}},
  };
  return table;
}

}  // namespace

std::optional<int64_t> onnx_operator_version(const std::string& op, int64_t opset) {
  const auto* schema =
      onnx::OpSchemaRegistry::Schema(op, static_cast<int>(opset), onnx::ONNX_DOMAIN);
  if (!schema) return std::nullopt;
  return schema->since_version();
}

bool reads_operator_version(const std::string& op, int64_t version) {
  auto it = read_versions().find(op);
  return it != read_versions().end() && it->second.count(version) > 0;
}

// The newest default-domain opset of the pinned ONNX release (onnx_model.h).
int64_t newest_onnx_opset() {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  return map.at(onnx::ONNX_DOMAIN).second;
}

}  // namespace graphsub
