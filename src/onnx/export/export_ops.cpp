// Per-operator writers: the ONNX nodes that compute each IR operator, in the target opset.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "onnx/export/export_context.h"
#include "onnx/format/opaque_attrs.h"
#include "onnx/format/operator_versions.h"
#include "onnx/format/runtime_operators.h"
#include "onnx/format/tensor_proto.h"

namespace graphsub {
namespace {

using onnx::NodeProto;

struct Ctx {
  ExportContext& c;
  const Node& n;
  NodeId id;
  std::vector<std::string> in;          // ONNX names of the IR inputs
  const std::vector<std::string>& out;  // names the IR outputs must get
  std::string base;                     // node name stem

  NodeProto& node(const std::string& op, std::vector<std::string> ins,
                  std::vector<std::string> outs) {
    return c.node(op, std::move(ins), std::move(outs), base);
  }
  std::string tmp(const std::string& what) { return c.fresh(base + "_" + what); }
  int64_t rank(size_t i) const { return static_cast<int64_t>(c.shape(n.inputs[i]).size()); }
};

// Clip of `from` to [lo, hi] into `to` (bounds as attributes before opset 11, as inputs from
// 11); an infinite bound is left out.
void write_clip(Ctx& x, const std::string& from, const std::string& to, double lo, double hi) {
  if (x.c.opset < 11) {
    NodeProto& node = x.node("Clip", {from}, {to});
    if (std::isfinite(lo)) set_attr(node, "min", static_cast<float>(lo));
    if (std::isfinite(hi)) set_attr(node, "max", static_cast<float>(hi));
    return;
  }
  std::vector<std::string> ins{
      from, std::isfinite(lo) ? x.c.float_const(x.base + "_min", static_cast<float>(lo)) : ""};
  if (std::isfinite(hi)) ins.push_back(x.c.float_const(x.base + "_max", static_cast<float>(hi)));
  if (ins.back().empty()) ins.pop_back();
  x.node("Clip", ins, {to});
}

void write_hardswish(Ctx& x, const std::string& from, const std::string& to);
void write_silu(Ctx& x, const std::string& from, const std::string& to);
void write_gelu(Ctx& x, const std::string& from, const std::string& to);

// An operator with a fused activation: the operator into a temporary, then the activation.
std::string act_target(Ctx& x) {
  const std::string& act = x.n.attrs.s("act");
  return act == "none" ? x.out[0] : x.tmp(act == "relu" ? "pre_relu" : "pre_act");
}
void write_act(Ctx& x, const std::string& from) {
  const std::string& act = x.n.attrs.s("act");
  if (act == "none") return;
  if (act == "relu6") return write_clip(x, from, x.out[0], 0, 6);
  if (act == "hardswish") return write_hardswish(x, from, x.out[0]);
  if (act == "silu") return write_silu(x, from, x.out[0]);
  if (act == "gelu") return write_gelu(x, from, x.out[0]);
  static const std::map<std::string, std::string> ops{
      {"relu", "Relu"}, {"sigmoid", "Sigmoid"}, {"tanh", "Tanh"}};
  auto it = ops.find(act);
  if (it == ops.end()) throw Error(fmt::format("export: unknown activation '{}'", act));
  x.node(it->second, {from}, {x.out[0]});
}

// A Conv node of inputs `in` (x, w [, b]) writing `to`.
void write_conv(Ctx& x, std::vector<std::string> in, const std::string& to) {
  const Shape& xs = x.c.shape(x.n.inputs[0]);
  const Shape& ws = x.c.shape(x.n.inputs[1]);
  NodeProto& node = x.node("Conv", std::move(in), {to});
  set_attr(node, "kernel_shape", std::vector<int64_t>{ws[2], ws[3]});
  set_attr(node, "strides", x.n.attrs.ints("stride"));
  set_attr(node, "pads", x.n.attrs.ints("pads"));
  set_attr(node, "dilations", x.n.attrs.ints("dilations"));
  int64_t groups = xs[1] / ws[1];
  if (groups != 1) set_attr(node, "group", groups);
}

void conv(Ctx& x) {
  std::string y = act_target(x);
  write_conv(x, x.in, y);
  write_act(x, y);
}

// conv_add(x, w, r [, b]): Conv, then Add of the residual r, then the activation.
void conv_add(Ctx& x) {
  std::vector<std::string> in{x.in[0], x.in[1]};
  if (x.in.size() > 3) in.push_back(x.in[3]);
  std::string conv_out = x.tmp("conv");
  write_conv(x, std::move(in), conv_out);
  std::string y = act_target(x);
  x.node("Add", {conv_out, x.in[2]}, {y});
  write_act(x, y);
}

void matmul(Ctx& x) {
  std::string y = act_target(x);
  bool bias = x.in.size() > 2;
  if (bias && x.rank(0) == 2 && x.rank(1) == 2) {
    x.node("Gemm", x.in, {y});
  } else if (bias) {
    std::string prod = x.tmp("matmul");
    x.node("MatMul", {x.in[0], x.in[1]}, {prod});
    x.node("Add", {prod, x.in[2]}, {y});
  } else {
    x.node("MatMul", x.in, {y});
  }
  write_act(x, y);
}

template <const char* Op>
void same(Ctx& x) {
  x.node(Op, x.in, {x.out[0]});
}
constexpr char kSub[] = "Sub", kMul[] = "Mul", kDiv[] = "Div", kRelu[] = "Relu", kPRelu[] = "PRelu",
               kSigmoid[] = "Sigmoid", kTanh[] = "Tanh", kErf[] = "Erf", kExp[] = "Exp",
               kSqrt[] = "Sqrt", kIdentity[] = "Identity", kGlobalAvg[] = "GlobalAveragePool",
               kNeg[] = "Neg";

// Add, or Sum where the target's lowering asks for it (ExportOptions::adds_as_sum).
void add(Ctx& x) {
  x.node(x.c.adds_as_sum.count(x.id) ? "Sum" : "Add", x.in, {x.out[0]});
}

// gelu(x) = 0.5 * x * (1 + erf(x / sqrt(2))); ONNX has no Gelu before opset 20.
void write_gelu(Ctx& x, const std::string& from, const std::string& to) {
  std::string scaled = x.tmp("scaled"), e = x.tmp("erf"), one = x.tmp("one_plus"),
              prod = x.tmp("x_times");
  x.node("Div", {from, x.c.float_const(x.base + "_sqrt2", std::sqrt(2.0f))}, {scaled});
  x.node("Erf", {scaled}, {e});
  x.node("Add", {e, x.c.float_const(x.base + "_one", 1.0f)}, {one});
  x.node("Mul", {from, one}, {prod});
  x.node("Mul", {prod, x.c.float_const(x.base + "_half", 0.5f)}, {to});
}

void gelu(Ctx& x) {
  write_gelu(x, x.in[0], x.out[0]);
}

void relu6(Ctx& x) {
  write_clip(x, x.in[0], x.out[0], 0, 6);
}

void clip(Ctx& x) {
  write_clip(x, x.in[0], x.out[0], x.n.attrs.f("min"), x.n.attrs.f("max"));
}

void hardsigmoid_node(Ctx& x, const std::string& from, const std::string& to, double alpha,
                      double beta) {
  NodeProto& node = x.node("HardSigmoid", {from}, {to});
  set_attr(node, "alpha", static_cast<float>(alpha));
  set_attr(node, "beta", static_cast<float>(beta));
}

void hardsigmoid(Ctx& x) {
  hardsigmoid_node(x, x.in[0], x.out[0], x.n.attrs.f("alpha"), x.n.attrs.f("beta"));
}

// HardSwish exists from opset 14; before, x * HardSigmoid(x) with slope 1/6 (as PyTorch writes it).
void write_hardswish(Ctx& x, const std::string& from, const std::string& to) {
  if (x.c.opset >= 14) {
    x.node("HardSwish", {from}, {to});
    return;
  }
  std::string gate = x.tmp("gate");
  hardsigmoid_node(x, from, gate, 1.0 / 6.0, 0.5);
  x.node("Mul", {from, gate}, {to});
}

// silu(x) = x * sigmoid(x); ONNX has no SiLU operator.
void write_silu(Ctx& x, const std::string& from, const std::string& to) {
  std::string gate = x.tmp("sigmoid");
  x.node("Sigmoid", {from}, {gate});
  x.node("Mul", {from, gate}, {to});
}

// Where(IsNaN(x), 0, x), as torch writes its attention softmax's guard.
void nan_to_zero(Ctx& x) {
  std::string nan = x.tmp("isnan");
  x.node("IsNaN", {x.in[0]}, {nan});
  x.node("Where", {nan, x.c.float_const(x.base + "_zero", 0.0f), x.in[0]}, {x.out[0]});
}

void hardswish(Ctx& x) {
  write_hardswish(x, x.in[0], x.out[0]);
}
void silu(Ctx& x) {
  write_silu(x, x.in[0], x.out[0]);
}

void leaky_relu(Ctx& x) {
  set_attr(x.node("LeakyRelu", x.in, {x.out[0]}), "alpha",
           static_cast<float>(x.n.attrs.f("alpha")));
}

void pow(Ctx& x) {
  x.node(
      "Pow",
      {x.in[0], x.c.float_const(x.base + "_exponent", static_cast<float>(x.n.attrs.f("exponent")))},
      {x.out[0]});
}

// A constant initializer of any shape (the context's helpers make 1-d or 0-d ones).
std::string int64_tensor(Ctx& x, const std::string& what, const Shape& shape,
                         const std::vector<int64_t>& v) {
  std::string name = x.c.fresh(x.base + "_" + what);
  *x.c.gp.add_initializer() = make_int64_tensor(name, shape, v);
  return name;
}
std::string float_tensor(Ctx& x, const std::string& what, const Shape& shape,
                         const std::vector<float>& v) {
  std::string name = x.c.fresh(x.base + "_" + what);
  *x.c.gp.add_initializer() = make_float_tensor(name, shape, v);
  return name;
}

void expand(Ctx& x) {
  x.node("Expand", {x.in[0], x.c.int64_const(x.base + "_shape", x.n.attrs.ints("shape"))},
         {x.out[0]});
}

void gather(Ctx& x) {
  const auto& is = x.n.attrs.ints("indices_shape");
  std::string idx =
      int64_tensor(x, "indices", Shape(is.begin(), is.end()), x.n.attrs.ints("indices"));
  set_attr(x.node("Gather", {x.in[0], idx}, {x.out[0]}), "axis", x.n.attrs.i("axis"));
}

void set_string_attr(NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// Resize with the scales it was imported with when they give its sizes (ONNX then maps
// coordinates with exactly those scales), else with the sizes.
void resize(Ctx& x) {
  const Attrs& a = x.n.attrs;
  const Shape& xs = x.c.shape(x.n.inputs[0]);
  const auto& sizes = a.ints("sizes");
  double sh = a.f("scale_h"), sw = a.f("scale_w");
  auto fsh = static_cast<float>(sh), fsw = static_cast<float>(sw);
  bool by_scales = static_cast<int64_t>(std::floor(static_cast<double>(xs[2]) * fsh)) == sizes[0] &&
                   static_cast<int64_t>(std::floor(static_cast<double>(xs[3]) * fsw)) == sizes[1] &&
                   static_cast<double>(fsh) == sh && static_cast<double>(fsw) == sw;
  if (x.c.opset < 11)  // Resize-10 has no coordinate modes: its meaning differs
    throw Error(
        fmt::format("export: {} cannot be written at opset {} (Resize reads as "
                    "graphsub's resize from opset 11)",
                    x.base, x.c.opset));
  std::string roi = x.c.opset >= 13 ? "" : float_tensor(x, "roi", {0}, {});
  std::vector<std::string> ins{x.in[0], roi};
  if (by_scales) {
    ins.push_back(float_tensor(x, "scales", {4}, {1.f, 1.f, fsh, fsw}));
  } else {
    ins.push_back(x.c.opset >= 13 ? "" : float_tensor(x, "scales", {0}, {}));
    ins.push_back(int64_tensor(x, "sizes", {4}, {xs[0], xs[1], sizes[0], sizes[1]}));
  }
  NodeProto& node = x.node("Resize", ins, {x.out[0]});
  set_string_attr(node, "mode", a.s("mode"));
  set_string_attr(node, "coordinate_transformation_mode", a.s("coordinate_transformation_mode"));
  if (a.s("mode") == "nearest") set_string_attr(node, "nearest_mode", a.s("nearest_mode"));
}

void transpose(Ctx& x) {
  auto perm = x.n.attrs.ints("perm");
  if (perm.empty())
    for (int64_t i = x.rank(0) - 1; i >= 0; --i) perm.push_back(i);
  set_attr(x.node("Transpose", x.in, {x.out[0]}), "perm", perm);
}

void reshape(Ctx& x) {
  const Shape& s = x.n.outputs[0].shape;
  x.node("Reshape", {x.in[0], x.c.int64_const(x.base + "_shape", {s.begin(), s.end()})},
         {x.out[0]});
}

void flatten(Ctx& x) {
  set_attr(x.node("Flatten", x.in, {x.out[0]}), "axis", x.n.attrs.i("axis"));
}

int64_t axis_of(Ctx& x, int64_t axis) {
  return axis < 0 ? axis + x.rank(0) : axis;
}

void concat(Ctx& x) {
  set_attr(x.node("Concat", x.in, x.out), "axis", axis_of(x, x.n.attrs.i("axis")));
}

void split(Ctx& x) {
  int64_t axis = axis_of(x, x.n.attrs.i("axis"));
  std::vector<int64_t> sizes;
  for (const auto& t : x.n.outputs) sizes.push_back(t.shape[static_cast<size_t>(axis)]);
  std::vector<std::string> ins{x.in[0]};
  if (x.c.opset >= 13) ins.push_back(x.c.int64_const(x.base + "_split", sizes));
  NodeProto& node = x.node("Split", ins, x.out);
  set_attr(node, "axis", axis);
  if (x.c.opset < 13) set_attr(node, "split", sizes);
}

void slice(Ctx& x) {
  const Attrs& a = x.n.attrs;
  if (x.c.opset < 10) {  // Slice-1: attributes, and no steps
    for (int64_t s : a.ints("steps"))
      if (s != 1)
        throw Error(fmt::format("export: {} has steps, which Slice cannot take at opset {}", x.base,
                                x.c.opset));
    NodeProto& node = x.node("Slice", {x.in[0]}, {x.out[0]});
    set_attr(node, "starts", a.ints("starts"));
    set_attr(node, "ends", a.ints("ends"));
    if (!a.ints("axes").empty()) set_attr(node, "axes", a.ints("axes"));
    return;
  }
  std::vector<std::string> ins{x.in[0], x.c.int64_const(x.base + "_starts", a.ints("starts")),
                               x.c.int64_const(x.base + "_ends", a.ints("ends"))};
  bool steps = !a.ints("steps").empty();
  if (!a.ints("axes").empty() || steps) {
    std::vector<int64_t> axes = a.ints("axes");
    if (axes.empty())
      for (size_t i = 0; i < a.ints("starts").size(); ++i) axes.push_back(static_cast<int64_t>(i));
    ins.push_back(x.c.int64_const(x.base + "_axes", axes));
  }
  if (steps) ins.push_back(x.c.int64_const(x.base + "_steps", a.ints("steps")));
  x.node("Slice", ins, {x.out[0]});
}

// Constant padding (pads and value as attributes before opset 11, as inputs from 11).
void write_pad(Ctx& x, const std::vector<int64_t>& pads, double value) {
  if (x.c.opset < 11) {
    NodeProto& node = x.node("Pad", {x.in[0]}, {x.out[0]});
    set_attr(node, "pads", pads);
    if (value != 0) set_attr(node, "value", static_cast<float>(value));
    return;
  }
  std::vector<std::string> ins{x.in[0], x.c.int64_const(x.base + "_pads", pads)};
  if (value != 0) ins.push_back(x.c.float_const(x.base + "_value", static_cast<float>(value)));
  x.node("Pad", ins, {x.out[0]});
}

void pad(Ctx& x) {
  write_pad(x, x.n.attrs.ints("pads"), x.n.attrs.f("value"));
}

template <bool Max>
void pool(Ctx& x) {
  NodeProto& node = x.node(Max ? "MaxPool" : "AveragePool", x.in, {x.out[0]});
  set_attr(node, "kernel_shape", x.n.attrs.ints("kernel"));
  set_attr(node, "strides", x.n.attrs.ints("stride"));
  set_attr(node, "pads", x.n.attrs.ints("pads"));
  if (!Max) set_attr(node, "count_include_pad", x.n.attrs.i("count_include_pad"));
}

void batchnorm(Ctx& x) {
  set_attr(x.node("BatchNormalization", x.in, {x.out[0]}), "epsilon",
           static_cast<float>(x.n.attrs.f("epsilon")));
}

void softmax(Ctx& x) {
  int64_t rank = x.rank(0), axis = axis_of(x, x.n.attrs.i("axis"));
  if (x.c.opset >= 13 || axis == rank - 1) {
    set_attr(x.node("Softmax", x.in, {x.out[0]}), "axis", axis);
    return;
  }
  // Before opset 13 Softmax flattens the axes from `axis` on: move the axis last instead.
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  std::string moved = x.tmp("moved"), soft = x.tmp("softmax");
  set_attr(x.node("Transpose", x.in, {moved}), "perm", perm);
  set_attr(x.node("Softmax", {moved}, {soft}), "axis", rank - 1);
  set_attr(x.node("Transpose", {soft}, {x.out[0]}), "perm", inv);
}

// attention: ONNX's Attention (opset 23 on) with the scale written out; a file of an older
// opset has no Attention, which write_operator reports by name.
void attention(Ctx& x) {
  NodeProto& node = x.node("Attention", x.in, {x.out[0]});
  set_attr(node, "scale", static_cast<float>(x.n.attrs.f("scale")));
  set_attr(node, "is_causal", x.n.attrs.i("is_causal"));
  for (const char* heads : {"q_num_heads", "kv_num_heads"})  // the 3-d form's
    if (x.n.attrs.i(heads) != 0) set_attr(node, heads, x.n.attrs.i(heads));
}

// rotary_embedding: ONNX's RotaryEmbedding (opset 23 on), its position ids an int64
// initializer [batch, sequence] when the node holds them. The rank-2 form (one batch and
// head, the axiom language's) is written as the rank-4 one between two Reshapes.
void rotary_embedding(Ctx& x) {
  std::vector<std::string> in = x.in;
  const Shape xs = x.c.shape(x.n.inputs[0]);
  const std::vector<int64_t>& ids = x.n.attrs.ints("position_ids");
  int64_t seq = xs.size() == 4 ? xs[2] : xs[xs.size() - 2];
  bool matrix = xs.size() == 2;
  auto reshaped = [&](const std::string& from, const Shape& to, const char* what) {
    std::string name = x.tmp(what);
    x.node("Reshape", {from, x.c.int64_const(name + "_shape", to)}, {name});
    return name;
  };
  if (matrix) {
    in[0] = reshaped(in[0], {1, 1, xs[0], xs[1]}, "heads");
    if (ids.empty()) {
      const Shape cs = x.c.shape(x.n.inputs[1]);
      in[1] = reshaped(in[1], {1, cs[0], cs[1]}, "cos");
      in[2] = reshaped(in[2], {1, cs[0], cs[1]}, "sin");
    }
  }
  if (!ids.empty())
    in.push_back(x.c.int64_const(x.base + "_position_ids", ids,
                                 Shape{static_cast<int64_t>(ids.size()) / seq, seq}));
  std::string y = matrix ? x.tmp("rotated") : x.out[0];
  NodeProto& node = x.node("RotaryEmbedding", in, {y});
  for (const char* name : {"interleaved", "rotary_embedding_dim", "num_heads"})
    if (x.n.attrs.i(name) != 0) set_attr(node, name, x.n.attrs.i(name));
  if (matrix) x.node("Reshape", {y, x.c.int64_const(x.base + "_shape", xs)}, {x.out[0]});
}

// A reduction whose axes are an attribute before `input_from` and an input from it on
// (ReduceSum from opset 13, ReduceMean from 18).
void reduce_node(Ctx& x, const char* op, int64_t input_from, const std::string& in,
                 const std::string& out, const std::vector<int64_t>& axes, int64_t keep) {
  std::vector<std::string> ins{in};
  bool as_input = x.c.opset >= input_from;
  if (as_input && !axes.empty()) ins.push_back(x.c.int64_const(out + "_axes", axes));
  NodeProto& node = x.node(op, ins, {out});
  if (!as_input && !axes.empty()) set_attr(node, "axes", axes);
  set_attr(node, "keepdims", keep);
}

void reduce_mean_node(Ctx& x, const std::string& in, const std::string& out,
                      const std::vector<int64_t>& axes, int64_t keep) {
  reduce_node(x, "ReduceMean", 18, in, out, axes, keep);
}

std::vector<int64_t> reduced_axes(Ctx& x) {
  std::vector<int64_t> axes;
  for (int64_t a : x.n.attrs.ints("axes")) axes.push_back(axis_of(x, a));
  return axes;
}

void reduce_mean(Ctx& x) {
  reduce_mean_node(x, x.in[0], x.out[0], reduced_axes(x), x.n.attrs.i("keepdims"));
}

void reduce_sum(Ctx& x) {
  reduce_node(x, "ReduceSum", 13, x.in[0], x.out[0], reduced_axes(x), x.n.attrs.i("keepdims"));
}

// A normalization over the axes from `axis` (layernorm, rms_norm): as the one ONNX node
// `op_type` from opset `since` (true), else the axes the caller's formula reduces over.
bool normalization_node(Ctx& x, const char* op_type, int64_t since, std::vector<int64_t>& axes) {
  int64_t axis = axis_of(x, x.n.attrs.i("axis"));
  if (x.c.opset >= since) {
    NodeProto& node = x.node(op_type, x.in, {x.out[0]});
    set_attr(node, "axis", axis);
    set_attr(node, "epsilon", static_cast<float>(x.n.attrs.f("epsilon")));
    return true;
  }
  for (int64_t a = axis; a < x.rank(0); ++a) axes.push_back(a);
  return false;
}

// layernorm below opset 17: (x - mean) / sqrt(mean((x - mean)^2) + eps) * scale + bias, in the
// form ONNX Runtime's LayerNormFusion turns into one kernel: the square as Pow by 2 and the
// bias Add always there (zeros where the operator has none), without which it runs as nine.
void layernorm(Ctx& x) {
  std::vector<int64_t> axes;
  if (normalization_node(x, "LayerNormalization", 17, axes)) return;
  float eps = static_cast<float>(x.n.attrs.f("epsilon"));
  std::string mean = x.tmp("mean"), d = x.tmp("centred"), sq = x.tmp("sq"), var = x.tmp("var"),
              ve = x.tmp("var_eps"), sd = x.tmp("std"), norm = x.tmp("norm"),
              scaled = x.tmp("scaled");
  reduce_mean_node(x, x.in[0], mean, axes, 1);
  x.node("Sub", {x.in[0], mean}, {d});
  x.node("Pow", {d, x.c.float_const(x.base + "_two", 2.0f)}, {sq});
  reduce_mean_node(x, sq, var, axes, 1);
  x.node("Add", {var, x.c.float_const(x.base + "_eps", eps)}, {ve});
  x.node("Sqrt", {ve}, {sd});
  x.node("Div", {d, sd}, {norm});
  x.node("Mul", {norm, x.in[1]}, {scaled});
  const Shape& norm_shape = x.c.shape(x.n.inputs[1]);
  std::string bias = x.in.size() > 2
                         ? x.in[2]
                         : float_tensor(x, "no_bias", norm_shape,
                                        std::vector<float>(static_cast<size_t>(numel(norm_shape))));
  x.node("Add", {scaled, bias}, {x.out[0]});
}

// rms_norm: RMSNormalization from opset 23; before, x / sqrt(mean(x^2) + eps) * scale over the
// axes from `axis`, in the form ONNX Runtime's SimplifiedLayerNormFusion matches (Pow by 2 and
// Div; ONNX's function body, x * x and Reciprocal, is not fused there and runs as seven kernels).
void rms_norm(Ctx& x) {
  std::vector<int64_t> axes;
  if (normalization_node(x, "RMSNormalization", 23, axes)) return;
  float eps = static_cast<float>(x.n.attrs.f("epsilon"));
  std::string sq = x.tmp("sq"), ms = x.tmp("mean_sq"), me = x.tmp("mean_sq_eps"),
              rms = x.tmp("rms"), norm = x.tmp("norm");
  x.node("Pow", {x.in[0], x.c.float_const(x.base + "_two", 2.0f)}, {sq});
  reduce_mean_node(x, sq, ms, axes, 1);
  x.node("Add", {ms, x.c.float_const(x.base + "_eps", eps)}, {me});
  x.node("Sqrt", {me}, {rms});
  x.node("Div", {x.in[0], rms}, {norm});
  x.node("Mul", {norm, x.in[1]}, {x.out[0]});
}

// gelu_tanh: Gelu approximate="tanh" from opset 20; before, the formula
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void gelu_tanh(Ctx& x) {
  if (x.c.opset >= 20) {
    NodeProto& node = x.node("Gelu", {x.in[0]}, {x.out[0]});
    auto* a = node.add_attribute();
    a->set_name("approximate");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("tanh");
    return;
  }
  std::string x2 = x.tmp("x2"), x3 = x.tmp("x3"), cx3 = x.tmp("c_x3"), inner = x.tmp("inner"),
              arg = x.tmp("arg"), t = x.tmp("tanh"), one = x.tmp("one_plus"),
              prod = x.tmp("x_times");
  x.node("Mul", {x.in[0], x.in[0]}, {x2});
  x.node("Mul", {x2, x.in[0]}, {x3});
  x.node("Mul", {x3, x.c.float_const(x.base + "_cubic", 0.044715f)}, {cx3});
  x.node("Add", {x.in[0], cx3}, {inner});
  x.node("Mul", {inner, x.c.float_const(x.base + "_k", 0.7978845608028654f)}, {arg});
  x.node("Tanh", {arg}, {t});
  x.node("Add", {t, x.c.float_const(x.base + "_one", 1.0f)}, {one});
  x.node("Mul", {x.in[0], one}, {prod});
  x.node("Mul", {prod, x.c.float_const(x.base + "_half", 0.5f)}, {x.out[0]});
}

// A runtime's fused operator: its node by the table of onnx/format/runtime_operators.h, every
// IR attribute written under its own name. An optional output nothing reads (a skip
// normalization's sum) is left out, so that the runtime does not compute it.
void runtime_operator(Ctx& x) {
  const RuntimeOperator* r = runtime_operator_of(x.n.op->name);
  if (!r) throw Error(fmt::format("export: no ONNX node for {}", x.n.op->name));
  std::vector<std::string> outs;
  for (size_t k = 0; k < x.out.size(); ++k) {
    if (k > 0 && !x.c.is_read({x.id, static_cast<uint32_t>(k)})) continue;
    auto at = static_cast<size_t>(r->outputs[k]);
    if (outs.size() <= at) outs.resize(at + 1);
    outs[at] = x.out[k];
  }
  std::vector<std::string> in = x.in;
  if (!r->ranked_inputs.empty()) {  // each optional input at its rank's position
    auto required = static_cast<size_t>(x.n.op->min_inputs);
    in.resize(std::min(in.size(), required));
    for (size_t i = required; i < x.in.size(); ++i) {
      auto rank = static_cast<int>(x.c.shape(x.n.inputs[i]).size());
      auto it = std::find_if(r->ranked_inputs.begin(), r->ranked_inputs.end(),
                             [&](const RankedInput& p) { return p.rank == rank; });
      if (it == r->ranked_inputs.end())
        throw Error(fmt::format("export: {} has no input of rank {}", r->op_type, rank));
      auto at = static_cast<size_t>(it->at);
      if (in.size() <= at) in.resize(at + 1);
      in[at] = x.in[i];
    }
  }
  for (const IntInput& held : r->int_inputs) {  // by position, in increasing order
    const std::vector<int64_t>& v = x.n.attrs.ints(std::string(held.name));
    const Shape& first = x.c.shape(x.n.inputs[0]);
    // The node takes batches of sequences (the axiom language's matrix form has no node).
    if (first.size() < 3)
      throw Error(fmt::format("export: {} of a rank-{} input has no {} node", x.n.op->name,
                              first.size(), r->op_type));
    std::string base = x.base + "_" + std::string(held.name);
    if (in.size() < static_cast<size_t>(held.at)) in.resize(static_cast<size_t>(held.at));
    std::string name;
    switch (held.layout) {
      case IntInput::Layout::PositionIds:
        name = x.c.int64_const(
            base, v,
            v.size() == 1 ? Shape{1} : Shape{first[0], static_cast<int64_t>(v.size()) / first[0]});
        break;
      case IntInput::Layout::PerBatch32:
        name = x.c.int32_const(base, v, Shape{static_cast<int64_t>(v.size())});
        break;
      case IntInput::Layout::Scalar32:
        name = x.c.int32_const(base, v, Shape{});
        break;
    }
    in.insert(in.begin() + held.at, name);
  }
  NodeProto& node = x.node(std::string(r->op_type), in, outs);
  if (!r->domain.empty()) {
    node.set_domain(std::string(r->domain));
    x.c.domains.insert(std::string(r->domain));
  }
  for (const AttrSpec& s : x.n.op->attrs) {
    const AttrValue* v = x.n.attrs.find(s.name);
    bool is_input = std::any_of(r->int_inputs.begin(), r->int_inputs.end(),
                                [&](const IntInput& p) { return p.name == s.name; });
    if (!v || is_input) continue;
    if (const auto* i = std::get_if<int64_t>(v))
      set_attr(node, s.name, *i);
    else if (const auto* f = std::get_if<double>(v))
      set_attr(node, s.name, static_cast<float>(*f));
    else if (const auto* l = std::get_if<std::vector<int64_t>>(v))
      set_attr(node, s.name, *l);
    else
      throw Error(
          fmt::format("export: attribute '{}' of {} has no ONNX form", s.name, x.n.op->name));
  }
}

// enlarge on a computed kernel (on weights it is folded before export): zero padding.
void enlarge(Ctx& x) {
  const Shape& ws = x.c.shape(x.n.inputs[0]);
  const auto& k = x.n.attrs.ints("kernel");
  int64_t dy = (k[0] - ws[2]) / 2, dx = (k[1] - ws[3]) / 2;
  write_pad(x, {0, 0, dy, dx, 0, 0, dy, dx}, 0);
}

void opaque(Ctx& x) {
  NodeProto n;
  decode_opaque_attrs(x.n.attrs, n);
  if (!n.domain().empty()) x.c.domains.insert(n.domain());
  auto absent_in = absent_positions(x.n.attrs, kOpaqueAbsentIn);
  auto absent_out = absent_positions(x.n.attrs, kOpaqueAbsentOut);
  std::vector<std::string> ins, outs;
  size_t k = 0;
  for (int64_t i = 0; k < x.in.size() || std::count(absent_in.begin(), absent_in.end(), i); ++i)
    ins.push_back(std::count(absent_in.begin(), absent_in.end(), i) ? "" : x.in[k++]);
  for (size_t i = 0; i < x.out.size(); ++i)
    outs.push_back(
        std::count(absent_out.begin(), absent_out.end(), static_cast<int64_t>(i)) ? "" : x.out[i]);
  NodeProto& node = x.node(n.op_type(), ins, outs);
  node.set_domain(n.domain());
  *node.mutable_attribute() = n.attribute();
}

using Writer = void (*)(Ctx&);
const std::map<std::string, Writer>& writers() {
  static const std::map<std::string, Writer> w{
      {"conv", conv},
      {"conv_add", conv_add},
      {"matmul", matmul},
      {"ewadd", add},
      {"add", add},
      {"sub", same<kSub>},
      {"ewmul", same<kMul>},
      {"mul", same<kMul>},
      {"smul", same<kMul>},
      {"div", same<kDiv>},
      {"relu", same<kRelu>},
      {"sigmoid", same<kSigmoid>},
      {"tanh", same<kTanh>},
      {"erf", same<kErf>},
      {"exp", same<kExp>},
      {"sqrt", same<kSqrt>},
      {"identity", same<kIdentity>},
      {"neg", same<kNeg>},
      {"gelu", gelu},
      {"relu6", relu6},
      {"clip", clip},
      {"hardsigmoid", hardsigmoid},
      {"hardswish", hardswish},
      {"silu", silu},
      {"nan_to_zero", nan_to_zero},
      {"leaky_relu", leaky_relu},
      {"prelu", same<kPRelu>},
      {"pow", pow},
      {"expand", expand},
      {"gather", gather},
      {"resize", resize},
      {"transpose", transpose},
      {"reshape", reshape},
      {"flatten", flatten},
      {"concat", concat},
      {"split", split},
      {"slice", slice},
      {"pad", pad},
      {"poolavg", pool<false>},
      {"poolmax", pool<true>},
      {"global_avgpool", same<kGlobalAvg>},
      {"batchnorm", batchnorm},
      {"softmax", softmax},
      {"attention", attention},
      {"rotary_embedding", rotary_embedding},
      {"layernorm", layernorm},
      {"rms_norm", rms_norm},
      {"ort_simplified_layernorm", rms_norm},  // runtime_operators.cpp says why
      {"gelu_tanh", gelu_tanh},
      {"reduce_mean", reduce_mean},
      {"reduce_sum", reduce_sum},
      {"enlarge", enlarge},
      {"opaque", opaque},
  };
  return w;
}

}  // namespace

void write_operator(ExportContext& c, NodeId id, const std::vector<std::string>& outs) {
  const Node& n = c.g.node(id);
  auto it = writers().find(n.op->name);
  Writer write = it != writers().end() ? it->second : nullptr;
  if (!write && !n.op->runtime.empty()) write = runtime_operator;
  if (!write) throw Error(fmt::format("export: no ONNX form for {}", c.g.describe(id)));
  Ctx x{c, n, id, {}, outs, n.name.empty() ? fmt::format("{}_{}", n.op->name, id) : n.name};
  for (auto r : n.inputs) x.in.push_back(c.name(r));
  int first = c.gp.node_size();
  write(x);
  if (n.op->name == "opaque" || !n.op->runtime.empty()) return;  // not of the default domain
  // A file of an old opset gets only the operators that opset has (Expand from 8, Erf from
  // 9): one it lacks is an error naming the node, never a node ONNX Runtime would refuse.
  for (int i = first; i < c.gp.node_size(); ++i)
    if (!onnx_operator_version(c.gp.node(i).op_type(), c.opset))
      throw Error(fmt::format("export: {} cannot be written at opset {} (ONNX has no {} there)",
                              x.base, c.opset, c.gp.node(i).op_type()));
}

}  // namespace graphsub
