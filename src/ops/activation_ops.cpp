// Element-wise operators with parameters, as ONNX defines them: clip (constant bounds),
// hardsigmoid, leaky_relu, prelu (a broadcast slope tensor) and pow (a constant exponent).
// relu6, hardswish and silu, which have no parameters, are in elementwise_ops.cpp.
//
// In the axiom language each takes one parameter that spells its float attributes exactly
// (shortest round-trip decimal, several joined by '_'): (hardsigmoid 0.2_0.5 ?x),
// (clip -1_1 ?x), (leaky_relu 0.01 ?x), (pow 2 ?x); an integral single value is an integer.
// The values the generator and check-axioms try are the domains of specs/operators.axioms;
// a rule with a parameter variable matches any value, so the axioms with a variable hold
// for every value.
//
// For uint32 (the generator's fingerprints) each uses a polynomial stand-in that depends on
// its parameter, anchored where the real functions meet: clip 0_6 is relu6's stand-in,
// hardsigmoid 1/6_1/2 is hardswish's gate (hardswish(x) = x * hardsigmoid(x) there), and
// pow with a small integral exponent is the exact power (wrap-around arithmetic is a ring).
#include <cstring>
#include <limits>

#include "ops/families.h"
#include "ops/float_params.h"
#include "ops/kernel_util.h"

namespace graphsub {
namespace {

// A parameter-dependent uint32 coefficient: zero at the anchor values.
uint32_t mix(const std::vector<float>& v, const std::vector<float>& anchor) {
  auto h = [](const std::vector<float>& xs) {
    uint32_t r = 2166136261u;
    for (float x : xs) {
      uint32_t b = 0;
      std::memcpy(&b, &x, sizeof b);
      r = (r ^ b) * 16777619u;
    }
    return r;
  };
  return h(v) - h(anchor);
}

// The float function of each operator, built from its attributes; `names` are its float
// attributes in the order the axiom parameter spells them.
struct Clip {
  static constexpr const char* op = "clip";
  static constexpr const char* names[] = {"min", "max"};
  float lo, hi;
  explicit Clip(const std::vector<float>& v) : lo(v[0]), hi(v[1]) {}
  float operator()(float x) const { return std::min(std::max(x, lo), hi); }
  static uint32_t standin(const std::vector<float>& v, uint32_t x) {
    return Scalar<uint32_t>::relu6(x) + mix(v, {0.0f, 6.0f}) * x * x;
  }
};
struct HardSigmoid {
  static constexpr const char* op = "hardsigmoid";
  static constexpr const char* names[] = {"alpha", "beta"};
  float alpha, beta;
  explicit HardSigmoid(const std::vector<float>& v) : alpha(v[0]), beta(v[1]) {}
  float operator()(float x) const { return std::min(std::max(alpha * x + beta, 0.0f), 1.0f); }
  static uint32_t standin(const std::vector<float>& v, uint32_t x) {
    uint32_t gate = x * (x * 79u + 83u) + 89u;  // Scalar<uint32_t>::hardswish(x) / x
    return gate + mix(v, {1.0f / 6.0f, 0.5f}) * x * x;
  }
};
struct LeakyRelu {
  static constexpr const char* op = "leaky_relu";
  static constexpr const char* names[] = {"alpha"};
  float alpha;
  explicit LeakyRelu(const std::vector<float>& v) : alpha(v[0]) {}
  float operator()(float x) const { return x < 0 ? alpha * x : x; }
  static uint32_t standin(const std::vector<float>& v, uint32_t x) {
    return x * (x * 139u + 149u) + 151u + mix(v, {0.01f}) * x * x;
  }
};
struct Pow {
  static constexpr const char* op = "pow";
  static constexpr const char* names[] = {"exponent"};
  float e;
  explicit Pow(const std::vector<float>& v) : e(v[0]) {}
  float operator()(float x) const {
    if (e == 2.0f) return x * x;  // the common case, exactly as ONNX Runtime computes it
    return std::pow(x, e);
  }
  static uint32_t standin(const std::vector<float>& v, uint32_t x) {
    if (v[0] >= 0 && v[0] <= 8 && v[0] == std::nearbyint(v[0])) {
      uint32_t r = 1;
      for (int i = 0; i < static_cast<int>(v[0]); ++i) r *= x;
      return r;
    }
    return x * (x * 157u + 163u) + 167u + mix(v, {0.5f}) * x * x;
  }
};

template <class F>
std::vector<float> attr_floats(const Attrs& a) {
  std::vector<float> v;
  for (const char* n : F::names) v.push_back(static_cast<float>(a.f(n)));
  return v;
}

template <class F>
void kernel_param_f32(const KernelIO<float>& io) {
  F f(attr_floats<F>(io.attrs));
  int64_t n = io.out_types[0].numel();
  for (int64_t i = 0; i < n; ++i) io.out[0][i] = f(io.in[0][i]);
}
template <class F>
void kernel_param_u32(const KernelIO<uint32_t>& io) {
  std::vector<float> v = attr_floats<F>(io.attrs);
  int64_t n = io.out_types[0].numel();
  for (int64_t i = 0; i < n; ++i) io.out[0][i] = F::standin(v, io.in[0][i]);
}

template <class F>
Attrs params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  std::vector<float> v = param_floats(F::op, p, std::size(F::names));
  Attrs a;
  for (size_t i = 0; i < v.size(); ++i) a.set(F::names[i], static_cast<double>(v[i]));
  return a;
}

template <class F>
std::optional<std::vector<AxiomParam>> attrs_to_params(const Attrs& a,
                                                       std::span<const TensorType>) {
  auto p = floats_param(attr_floats<F>(a));
  if (!p) return std::nullopt;
  return std::vector<AxiomParam>{*p};
}

template <class F>
OpDef param_unary(const char* param, std::vector<AttrSpec> attrs) {
  return {.name = F::op,
          .axiom_name = F::op,
          .min_inputs = 1,
          .max_inputs = 1,
          .attrs = std::move(attrs),
          .infer = same_as_first,
          .kernel_f32 = kernel_param_f32<F>,
          .kernel_u32 = kernel_param_u32<F>,
          .elementwise = true,
          .standin = true,
          .axiom_params = {param},
          .params_to_attrs = params_to_attrs<F>,
          .attrs_to_params = attrs_to_params<F>};
}

// ---- prelu(x, slope): the slope broadcasts to x (ONNX's unidirectional broadcast) ----
std::vector<TensorType> infer_prelu(const Attrs&, std::span<const TensorType> in) {
  Shape out = broadcast_shapes("prelu", in[0].shape, in[1].shape);
  if (out != in[0].shape)
    throw Error(fmt::format("prelu: slope {} does not broadcast to the input {}",
                            shape_str(in[1].shape), shape_str(in[0].shape)));
  return {in[0]};
}

template <class T>
T prelu_at(T x, T s) {
  if constexpr (std::is_same_v<T, float>)
    return x < 0 ? s * x : x;
  else
    return x * (x * 173u + s) + 179u;
}

template <class T>
void kernel_prelu(const KernelIO<T>& io) {
  for_each_broadcast(io.in_types[0].shape, io.in_types[1].shape, [&](int64_t i, int64_t j) {
    io.out[0][i] = prelu_at<T>(io.in[0][i], io.in[1][j]);
  });
}

}  // namespace

void register_activation_ops(std::vector<OpDef>& defs) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  defs.push_back(param_unary<Clip>("bounds", {float_attr("min", -kInf), float_attr("max", kInf)}));
  defs.push_back(
      param_unary<HardSigmoid>("gate", {float_attr("alpha", 0.2), float_attr("beta", 0.5)}));
  defs.push_back(param_unary<LeakyRelu>("slope", {float_attr("alpha", 0.01)}));
  defs.push_back(param_unary<Pow>("exponent", {required_attr("exponent", AttrKind::Float)}));
  defs.push_back({.name = "prelu",
                  .axiom_name = "prelu",
                  .min_inputs = 2,
                  .max_inputs = 2,
                  .infer = infer_prelu,
                  .kernel_f32 = kernel_prelu<float>,
                  .kernel_u32 = kernel_prelu<uint32_t>,
                  .elementwise = true,
                  .standin = true});
}

}  // namespace graphsub
