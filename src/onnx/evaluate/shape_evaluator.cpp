#include "onnx/evaluate/shape_evaluator.h"

#include <set>

#include "onnx/evaluate/node_evaluator.h"
#include "onnx/format/tensor_proto.h"

namespace graphsub {
namespace evaluate {

std::vector<HostConstant> NodeEvaluator::run() {
  const std::string& op = n_.op_type();
  if (op == "Shape") {
    const Shape& dims = need(0).dims;
    int64_t rank = static_cast<int64_t>(dims.size());
    auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
    int64_t start = clamp(at_.i("start", 0)), end = clamp(at_.i("end", rank));
    HostConstant r = make(TensorProto::INT64, {std::max<int64_t>(0, end - start)});
    for (int64_t i = start; i < end; ++i) r.ints[static_cast<size_t>(i - start)] = dims[i];
    return {r};
  }
  if (op == "Size") {
    HostConstant r = make(TensorProto::INT64, {});
    r.ints[0] = numel(need(0).dims);
    return {r};
  }
  if (op == "Constant") return {constant()};
  if (op == "Identity") return {need(0)};
  if (op == "Cast") return {cast()};
  if (op == "Where") return {where()};
  if (op == "Reshape") return {reshape()};
  if (op == "Squeeze") return {squeeze()};
  if (op == "Unsqueeze") return {unsqueeze()};
  if (op == "Flatten") {
    const HostConstant& x = need(0);
    int64_t rank = static_cast<int64_t>(x.dims.size());
    int64_t a = at_.i("axis", 1);
    if (a < -rank || a > rank) fail(fmt::format("axis {} is out of range", a));
    if (a < 0) a += rank;
    int64_t outer = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.dims[d];
    return {with_dims(x, {outer, outer ? x.numel() / outer : 0})};
  }
  if (op == "Expand") return {expand()};
  if (op == "Concat") return {concat()};
  if (op == "Gather") return {gather()};
  if (op == "Slice") return {slice()};
  if (op == "Transpose") return {transpose()};
  if (op == "ScatterND") return {scatter_nd()};
  if (op == "Pad") return {pad()};
  if (op == "Range") return {range()};
  if (op == "ConstantOfShape") return {constant_of_shape()};
  if (op.rfind("Reduce", 0) == 0) return {reduce()};
  if (op == "Neg" || op == "Abs" || op == "Not" || op == "Floor" || op == "Ceil" || op == "Sqrt" ||
      op == "Reciprocal")
    return {unary()};
  return {elementwise()};
}

}  // namespace evaluate

using evaluate::NodeEvaluator;
using evaluate::Unsupported;
using onnx::NodeProto;
using onnx::TensorProto;

bool foldable_op(const std::string& op) {
  static const std::set<std::string> ops = {"Shape",
                                            "Size",
                                            "Constant",
                                            "Identity",
                                            "Cast",
                                            "Where",
                                            "Reshape",
                                            "Squeeze",
                                            "Unsqueeze",
                                            "Flatten",
                                            "Expand",
                                            "Concat",
                                            "Gather",
                                            "Slice",
                                            "Transpose",
                                            "ScatterND",
                                            "Pad",
                                            "Range",
                                            "ConstantOfShape",
                                            "ReduceProd",
                                            "ReduceSum",
                                            "ReduceMin",
                                            "ReduceMax",
                                            "Neg",
                                            "Abs",
                                            "Not",
                                            "Floor",
                                            "Ceil",
                                            "Sqrt",
                                            "Reciprocal",
                                            "Add",
                                            "Sub",
                                            "Mul",
                                            "Div",
                                            "Mod",
                                            "Pow",
                                            "Min",
                                            "Max",
                                            "Equal",
                                            "Less",
                                            "Greater",
                                            "LessOrEqual",
                                            "GreaterOrEqual",
                                            "And",
                                            "Or",
                                            "Xor"};
  return ops.count(op) > 0;
}

std::optional<std::vector<HostConstant>> fold_node(const NodeProto& n,
                                                   const std::vector<const HostConstant*>& in,
                                                   int64_t opset) {
  try {
    return NodeEvaluator(n, in, opset).run();
  } catch (const Unsupported&) {
    return std::nullopt;
  }
}

}  // namespace graphsub
