// Converters for element-wise arithmetic, activations, Gemm and MatMul.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/error.h"
#include "onnx/import/import_context.h"

namespace graphsub {
namespace {

using onnx::NodeProto;

// `gate` computed by the operator `op` (with `alpha` when given) from `x` alone.
bool gate_of(ImportContext& c, TensorRef gate, TensorRef x, const char* op,
             std::optional<double> alpha = std::nullopt) {
  const Node& g = c.g.node(gate.node);
  if (g.op->name != op || g.inputs.size() != 1 || g.inputs[0] != x) return false;
  if (!alpha) return true;
  return std::fabs(g.attrs.f("alpha") - *alpha) < 1e-6 && g.attrs.f("beta") == 0.5;
}

// x * sigmoid(x) is SiLU (Swish), and x * hardsigmoid(x) with PyTorch's slope 1/6 is
// HardSwish (how PyTorch exports both before opset 14): one operator each, so that rules and
// oneDNN see the activation as a unit. The gate stays in the graph for other readers and is
// removed with the dead nodes otherwise.
std::optional<TensorRef> gated_activation(ImportContext& c, const NodeProto& n, TensorRef a,
                                          TensorRef b) {
  for (auto [x, gate] : {std::pair{a, b}, std::pair{b, a}}) {
    if (gate_of(c, gate, x, "sigmoid")) return c.op(n, "silu", {x});
    if (gate_of(c, gate, x, "hardsigmoid", 1.0 / 6.0)) return c.op(n, "hardswish", {x});
  }
  return std::nullopt;
}

// The value of a one-element constant, if `r` is one.
std::optional<float> scalar_of(ImportContext& c, TensorRef r) {
  const auto* v = c.const_floats(r);
  if (!v || v->size() != 1) return std::nullopt;
  return (*v)[0];
}

bool near(float v, double want) {
  return std::fabs(static_cast<double>(v) - want) <= 1e-6 * std::fabs(want);
}

// y when `t` is op(y, k) (or op(k, y) for a commutative op) with the constant k = `value`.
std::optional<TensorRef> with_constant(ImportContext& c, TensorRef t, const char* op, double value,
                                       bool commutative) {
  const Node& n = c.g.node(t.node);
  if (n.op->name != op || n.inputs.size() != 2) return std::nullopt;
  for (int i : {0, 1}) {
    if (i == 1 && !commutative) break;
    auto k = scalar_of(c, n.inputs[static_cast<size_t>(1 - i)]);
    if (k && near(*k, value)) return n.inputs[static_cast<size_t>(i)];
  }
  return std::nullopt;
}

// Exact GELU as PyTorch exports it before opset 20: (x * (erf(x / sqrt(2)) + 1)) * 0.5, the
// last product being this node (a, b). Returns x.
std::optional<TensorRef> gelu_input(ImportContext& c, TensorRef a, TensorRef b) {
  const double sqrt2 = std::sqrt(2.0);
  for (auto [t, k] : {std::pair{a, b}, std::pair{b, a}}) {
    auto half = scalar_of(c, k);
    const Node& m = c.g.node(t.node);
    if (!half || !near(*half, 0.5) || m.op->name != "ewmul") continue;
    for (size_t j : {0u, 1u}) {
      TensorRef x = m.inputs[j];
      auto e = with_constant(c, m.inputs[1 - j], "add", 1.0, true);
      if (!e) continue;
      const Node& erf = c.g.node(e->node);
      if (erf.op->name != "erf") continue;
      TensorRef d = erf.inputs[0];
      auto scaled = with_constant(c, d, "div", sqrt2, false);
      if (!scaled) scaled = with_constant(c, d, "smul", 1.0 / sqrt2, false);
      if (scaled && *scaled == x) return x;
    }
  }
  return std::nullopt;
}

// RMS normalization as transformers' Llama and T5 write it (before ONNX's RMSNormalization,
// opset 23): x / sqrt(mean(x^2) + eps) * g over the last axis, the division written as
// x * (1 / rms) or x / rms, the square as Pow(x, 2) or x * x, and g a constant as long as the
// last axis, this node (a, b) being the product with g. One operator, like layernorm, so that
// the search sees the normalization whole: its parts are not folded elsewhere (the scale into
// the next MatMul), which would keep ONNX Runtime from running its own fused kernel, and the
// generated rules that take rms_norm apply. Returns (x, g, eps).
struct RmsNormParts {
  TensorRef x, scale;
  float epsilon;
};

std::optional<RmsNormParts> rms_norm_parts(ImportContext& c, TensorRef a, TensorRef b) {
  auto is = [&](TensorRef t, const char* op, size_t inputs) -> const Node* {
    const Node& n = c.g.node(t.node);
    return n.op->name == op && n.inputs.size() == inputs ? &n : nullptr;
  };
  for (auto [t, g] : {std::pair{a, b}, std::pair{b, a}}) {
    const Shape& ts = c.shape(t);
    if (ts.size() < 2 || c.shape(g) != Shape{ts.back()} || !c.const_floats(g)) continue;
    // x / rms, or x * (1 / rms) in either order.
    std::optional<TensorRef> x, rms;
    if (const Node* d = is(t, "div", 2)) {
      x = d->inputs[0];
      rms = d->inputs[1];
    } else if (const Node* m = is(t, "mul", 2)) {
      for (size_t j : {0u, 1u}) {
        const Node* inv = is(m->inputs[1 - j], "div", 2);
        auto one = inv ? scalar_of(c, inv->inputs[0]) : std::nullopt;
        if (one && *one == 1.0f) {
          x = m->inputs[j];
          rms = inv->inputs[1];
        }
      }
    }
    if (!x || c.shape(*x) != ts) continue;
    const Node* root = is(*rms, "sqrt", 1);
    const Node* sum = root ? is(root->inputs[0], "add", 2) : nullptr;
    if (!sum) continue;
    for (size_t j : {0u, 1u}) {
      auto eps = scalar_of(c, sum->inputs[1 - j]);
      const Node* mean = is(sum->inputs[j], "reduce_mean", 1);
      if (!eps || !mean || mean->attrs.i("keepdims") != 1 ||
          mean->attrs.ints("axes") != std::vector<int64_t>{static_cast<int64_t>(ts.size()) - 1})
        continue;
      TensorRef sq = mean->inputs[0];
      const Node* p = is(sq, "pow", 1);
      const Node* m = is(sq, "ewmul", 2);
      bool square = (p && p->inputs[0] == *x && p->attrs.f("exponent") == 2.0) ||
                    (m && m->inputs[0] == *x && m->inputs[1] == *x);
      if (square) return RmsNormParts{*x, g, *eps};
    }
  }
  return std::nullopt;
}

// x0 when `x` is x0 - mean(x0) over the last axis: an RMS normalization of it is a layer
// normalization of x0 (PyTorch's LayerNorm before opset 17 exports as that composition).
std::optional<TensorRef> centred_input(ImportContext& c, TensorRef x) {
  const Node& d = c.g.node(x.node);
  if (d.op->name != "sub" || d.inputs.size() != 2) return std::nullopt;
  const Node& m = c.g.node(d.inputs[1].node);
  int64_t last = static_cast<int64_t>(c.shape(x).size()) - 1;
  if (m.op->name != "reduce_mean" || m.inputs[0] != d.inputs[0] || m.attrs.i("keepdims") != 1 ||
      m.attrs.ints("axes") != std::vector<int64_t>{last} || c.shape(d.inputs[0]) != c.shape(x))
    return std::nullopt;
  return d.inputs[0];
}

// A layernorm without bias plus a constant as long as the last axis is the layernorm with it.
std::optional<TensorRef> layernorm_with_bias(ImportContext& c, const NodeProto& n, TensorRef a,
                                             TensorRef b) {
  for (auto [t, bias] : {std::pair{a, b}, std::pair{b, a}}) {
    const Node& ln = c.g.node(t.node);
    if (ln.op->name != "layernorm" || ln.inputs.size() != 2 || !c.const_floats(bias) ||
        c.shape(bias) != c.shape(ln.inputs[1]))
      continue;
    return c.op(n, "layernorm", {ln.inputs[0], ln.inputs[1], bias}, ln.attrs);
  }
  return std::nullopt;
}

// True when `k` is a constant of which every element is `value` and whose broadcast against
// `x` leaves x's shape: then x + 0, x - 0, x * 1 and x / 1 are x, exactly (up to the sign of
// a zero). Randomly initialized exports are full of such biases (torchvision and timm zero
// their Linear biases: Swin 48 of 60 Adds, MaxViT 88 of 88); a trained model has few.
bool neutral(ImportContext& c, TensorRef x, TensorRef k, float value) {
  const auto* v = c.const_floats(k);
  if (!v || v->empty() || std::any_of(v->begin(), v->end(), [&](float e) { return e != value; }))
    return false;
  const Shape &xs = c.shape(x), &ks = c.shape(k);
  if (ks.size() > xs.size()) return false;
  for (size_t i = 1; i <= ks.size(); ++i)
    if (ks[ks.size() - i] != 1 && ks[ks.size() - i] != xs[xs.size() - i]) return false;
  return true;
}

// Equal shapes use the generator's operators (ewadd, ewmul), which the rules rewrite; a
// product with a 0-d scalar is smul; anything else broadcasts.
template <int Kind>  // 0 Add, 1 Sub, 2 Mul, 3 Div
std::vector<TensorRef> binary(ImportContext& c, const NodeProto& n) {
  TensorRef a = c.data(n, 0), b = c.data(n, 1);
  static const char* bcast[] = {"add", "sub", "mul", "div"};
  const float unit = Kind < 2 ? 0.0f : 1.0f;
  // Before the neutral product: a freshly initialized model's norm scale is all ones, and
  // the scale's Mul is what ONNX Runtime's fusion of the normalization needs.
  if (Kind == 2)
    if (auto r = rms_norm_parts(c, a, b)) {
      Attrs at{{"axis", static_cast<int64_t>(c.shape(r->x).size()) - 1},
               {"epsilon", static_cast<double>(r->epsilon)}};
      if (auto x = centred_input(c, r->x)) return {c.op(n, "layernorm", {*x, r->scale}, at)};
      return {c.op(n, "rms_norm", {r->x, r->scale}, at)};
    }
  if (neutral(c, a, b, unit) || (Kind % 2 == 0 && neutral(c, b, a, unit))) {
    ++c.summary.no_ops;
    return {neutral(c, a, b, unit) ? a : b};
  }
  if (Kind == 0)
    if (auto y = layernorm_with_bias(c, n, a, b)) return {*y};
  if (Kind == 2 && c.shape(a) == c.shape(b))
    if (auto y = gated_activation(c, n, a, b)) return {*y};
  if (Kind == 2)
    if (auto x = gelu_input(c, a, b)) return {c.op(n, "gelu", {*x})};
  if (c.shape(a) == c.shape(b)) {
    if (Kind == 0) return {c.op(n, "ewadd", {a, b})};
    if (Kind == 2) return {c.op(n, "ewmul", {a, b})};
  }
  if (Kind == 2 && c.shape(b).empty() && !c.shape(a).empty()) return {c.op(n, "smul", {a, b})};
  if (Kind == 2 && c.shape(a).empty() && !c.shape(b).empty()) return {c.op(n, "smul", {b, a})};
  // A constant of one element that leaves the other operand's shape ([1], as torch computes
  // its attention scale) is the same product with a scalar.
  if (Kind == 2)
    for (auto [x, k] : {std::pair{a, b}, std::pair{b, a}}) {
      auto v = scalar_of(c, k);
      if (v && !c.shape(k).empty() && c.shape(k).size() <= c.shape(x).size())
        return {c.op(n, "smul", {x, c.float_weight(n.name() + "_scalar", Shape{}, {*v})})};
    }
  return {c.op(n, bcast[Kind], {a, b})};
}

// A Sum of two tensors is their Add (graphsub writes one where ONNX Runtime would fuse an Add
// into a slower kernel, ort/skip_norm_lowering.h); other input counts stay opaque.
std::vector<TensorRef> sum(ImportContext& c, const NodeProto& n) {
  if (n.input_size() != 2)
    throw Decline{fmt::format("a Sum of {} inputs (graphsub reads a Sum of two)", n.input_size())};
  return binary<0>(c, n);
}

// Where(IsNaN(x), 0, x) is nan_to_zero(x): torch's scaled dot-product attention guards its
// softmax so, giving a query whose every key is masked zeros instead of NaN. Any other Where
// computed at run time stays opaque (graphsub's tensors hold no booleans).
std::vector<TensorRef> where(ImportContext& c, const NodeProto& n) {
  if (n.input_size() != 3) throw Decline{"a Where without three inputs"};
  TensorRef cond = c.input(n, 0), x = c.input(n, 2);
  const Node& test = c.g.node(cond.node);
  bool isnan_of_x = test.op->name == "opaque" && test.attrs.s("op_type") == "IsNaN" &&
                    test.attrs.s("domain").empty() && test.inputs.size() == 1 &&
                    test.inputs[0] == x;
  if (!isnan_of_x || !neutral(c, x, c.input(n, 1), 0.0f))
    throw Decline{"a Where other than Where(IsNaN(x), 0, x)"};
  return {c.op(n, "nan_to_zero", {c.data(n, 2)})};
}

// Reciprocal is 1 / x: read as that division, one operator for the rules and for the RMS
// normalization's reading (torch's dynamo exporter writes rsqrt as Reciprocal(Sqrt(x))).
std::vector<TensorRef> reciprocal(ImportContext& c, const NodeProto& n) {
  TensorRef one = c.float_weight(n.name() + "_one", Shape{}, {1.0f});
  return {c.op(n, "div", {one, c.data(n, 0)})};
}

template <const char* Op>
std::vector<TensorRef> unary(ImportContext& c, const NodeProto& n) {
  return {c.op(n, Op, {c.data(n, 0)})};
}
constexpr char kRelu[] = "relu", kSigmoid[] = "sigmoid", kTanh[] = "tanh", kErf[] = "erf",
               kExp[] = "exp", kSqrt[] = "sqrt", kHardSwish[] = "hardswish", kNeg[] = "neg";

// A constant scalar input (any shape with one element); nullopt when absent, Decline when
// computed at run time or not a single value.
std::optional<float> const_scalar(ImportContext& c, const NodeProto& n, int i, const char* what) {
  if (!c.has_input(n, i)) return std::nullopt;
  const auto* v = c.const_floats(c.input(n, i));
  if (!v)
    throw Decline{
        fmt::format("{} '{}' is computed at run time", what, ImportContext::input_name(n, i))};
  if (v->size() != 1)
    throw Decline{fmt::format("{} '{}' has {} values, not one", what,
                              ImportContext::input_name(n, i), v->size())};
  return (*v)[0];
}

// Clip (bounds as attributes before opset 11, as inputs from 11) with constant bounds: relu6 for
// [0, 6], relu for [0, inf), else clip.
std::vector<TensorRef> clip(ImportContext& c, const NodeProto& n) {
  TensorRef x = c.data(n, 0);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float lo = -kInf, hi = kInf;
  if (c.opset < 11) {  // Clip-6: the bounds are attributes
    NodeAttrs at(n, ImportContext::label(n));
    lo = at.f("min", -kInf);
    hi = at.f("max", kInf);
  } else {
    lo = const_scalar(c, n, 1, "Clip's min").value_or(-kInf);
    hi = const_scalar(c, n, 2, "Clip's max").value_or(kInf);
  }
  if (lo == 0 && hi == 6) return {c.op(n, "relu6", {x})};
  if (lo == 0 && hi == kInf) return {c.op(n, "relu", {x})};
  return {
      c.op(n, "clip", {x}, {{"min", static_cast<double>(lo)}, {"max", static_cast<double>(hi)}})};
}

std::vector<TensorRef> hardsigmoid(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  return {c.op(n, "hardsigmoid", {c.data(n, 0)},
               {{"alpha", static_cast<double>(at.f("alpha", 0.2f))},
                {"beta", static_cast<double>(at.f("beta", 0.5f))}})};
}

std::vector<TensorRef> leaky_relu(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  return {c.op(n, "leaky_relu", {c.data(n, 0)},
               {{"alpha", static_cast<double>(at.f("alpha", 0.01f))}})};
}

std::vector<TensorRef> prelu(ImportContext& c, const NodeProto& n) {
  return {c.op(n, "prelu", {c.data(n, 0), c.data(n, 1)})};
}

// Pow with a constant exponent; x^1 is x itself.
std::vector<TensorRef> pow(ImportContext& c, const NodeProto& n) {
  TensorRef x = c.data(n, 0);
  float e = *const_scalar(c, n, 1, "Pow's exponent");
  if (c.shape(c.input(n, 1)).size() > c.shape(x).size())
    throw Decline{"the exponent has a higher rank than the base"};
  if (e == 1.0f) return {c.op(n, "identity", {x})};
  return {c.op(n, "pow", {x}, {{"exponent", static_cast<double>(e)}})};
}

std::vector<TensorRef> gelu(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  std::string approx = at.s("approximate", "none");
  if (approx == "tanh") return {c.op(n, "gelu_tanh", {c.data(n, 0)})};
  if (approx != "none") throw Decline{fmt::format("Gelu approximate='{}'", approx)};
  return {c.op(n, "gelu", {c.data(n, 0)})};
}

// A 2-d transpose; weights with data are transposed now rather than at run time.
TensorRef transpose2d(ImportContext& c, const NodeProto& n, TensorRef x) {
  const Shape& s = c.shape(x);
  if (s.size() != 2)
    throw Error(fmt::format("{}: Gemm operands must be 2-d, got {}", ImportContext::label(n),
                            shape_str(s)));
  if (const auto* v = c.const_floats(x)) {
    int64_t rows = s[0], cols = s[1];
    std::vector<float> t(v->size());
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = (*v)[i * cols + j];
    return c.float_weight(c.g.node(x.node).name + "_T", {cols, rows}, std::move(t));
  }
  return c.op(n, "transpose", {x}, {{"perm", std::vector<int64_t>{1, 0}}});
}

// x * s for a constant s; weights with data are scaled now.
TensorRef scaled(ImportContext& c, const NodeProto& n, TensorRef x, float s, const char* what) {
  if (s == 1.0f) return x;
  if (const auto* v = c.const_floats(x)) {
    std::vector<float> y(*v);
    for (float& e : y) e *= s;
    return c.float_weight(c.g.node(x.node).name + "_" + what, c.shape(x), std::move(y));
  }
  TensorRef k = c.float_weight(c.node_name + "_" + what, {}, {s});
  return c.op(n, "smul", {x, k});
}

std::vector<TensorRef> gemm(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  TensorRef a = c.data(n, 0), b = c.data(n, 1);
  if (at.i("transA", 0)) a = transpose2d(c, n, a);
  if (at.i("transB", 0)) b = transpose2d(c, n, b);
  float alpha = at.f("alpha", 1.0f), beta = at.f("beta", 1.0f);
  // alpha scales the product; folded into B when B is a weight.
  if (c.const_floats(b))
    b = scaled(c, n, b, alpha, "alpha");
  else
    a = scaled(c, n, a, alpha, "alpha");
  if (c.shape(a).size() != 2 || c.shape(b).size() != 2)
    throw Error(fmt::format("{}: Gemm operands must be 2-d, got {} and {}", ImportContext::label(n),
                            shape_str(c.shape(a)), shape_str(c.shape(b))));
  if (!c.has_input(n, 2) || beta == 0.0f) return {c.op(n, "matmul", {a, b})};
  TensorRef bias = scaled(c, n, c.data(n, 2), beta, "beta");
  int64_t cols = c.shape(b)[1];
  const Shape& bs = c.shape(bias);
  if (bs == Shape{cols}) return {c.op(n, "matmul", {a, b, bias})};
  if (bs == Shape{1, cols}) {
    if (const auto* v = c.const_floats(bias))
      return {
          c.op(n, "matmul", {a, b, c.float_weight(c.g.node(bias.node).name + "_row", {cols}, *v)})};
  }
  return {c.op(n, "add", {c.op(n, "matmul", {a, b}), bias})};
}

std::vector<TensorRef> matmul(ImportContext& c, const NodeProto& n) {
  TensorRef a = c.data(n, 0), b = c.data(n, 1);
  Shape sa = c.shape(a), sb = c.shape(b);
  if (sa.empty() || sb.empty())
    throw Error(fmt::format("{}: MatMul operands must not be scalars", ImportContext::label(n)));
  bool vec_a = sa.size() == 1, vec_b = sb.size() == 1;
  // Vectors become 1-row / 1-column matrices; the result is reshaped back afterwards.
  if (vec_a) a = c.op(n, "reshape", {a}, {{"shape", std::vector<int64_t>{1, sa[0]}}});
  if (vec_b) b = c.op(n, "reshape", {b}, {{"shape", std::vector<int64_t>{sb[0], 1}}});
  sa = c.shape(a);
  sb = c.shape(b);
  bool same_batch = sa.size() == sb.size() && std::equal(sa.begin(), sa.end() - 2, sb.begin());
  if (!(sb.size() == 2 || same_batch))
    throw Decline{fmt::format("MatMul of {} and {} broadcasts batch dimensions", shape_str(sa),
                              shape_str(sb))};
  TensorRef y = c.op(n, "matmul", {a, b});
  if (vec_a || vec_b) {
    Shape out(c.shape(y).begin(), c.shape(y).end());
    if (vec_b) out.erase(out.end() - 1);
    if (vec_a) out.erase(out.end() - 1 - (vec_b ? 0 : 1));
    y = c.op(n, "reshape", {y}, {{"shape", std::vector<int64_t>(out.begin(), out.end())}});
  }
  return {y};
}

}  // namespace

void add_math_converters(std::map<std::string, Converter>& t) {
  t["Add"] = binary<0>;
  t["Sum"] = sum;
  t["Sub"] = binary<1>;
  t["Mul"] = binary<2>;
  t["Div"] = binary<3>;
  t["Relu"] = unary<kRelu>;
  t["Sigmoid"] = unary<kSigmoid>;
  t["Tanh"] = unary<kTanh>;
  t["Erf"] = unary<kErf>;
  t["Exp"] = unary<kExp>;
  t["Sqrt"] = unary<kSqrt>;
  t["Reciprocal"] = reciprocal;
  t["Gelu"] = gelu;
  t["Where"] = where;
  t["Clip"] = clip;
  t["HardSigmoid"] = hardsigmoid;
  t["HardSwish"] = unary<kHardSwish>;
  t["Neg"] = unary<kNeg>;
  t["LeakyRelu"] = leaky_relu;
  t["PRelu"] = prelu;
  t["Pow"] = pow;
  t["Gemm"] = gemm;
  t["MatMul"] = matmul;
}

}  // namespace graphsub
