// Element-wise operators with parameters, as ONNX defines them: clip (constant bounds),
// hardsigmoid, leaky_relu, prelu (a broadcast slope tensor) and pow (a constant exponent).
// Their parameters are attributes, so they lie outside the axiom language (a rule's term
// would match every parameter value); relu6, hardswish and silu, which have none, are in
// elementwise_ops.cpp. For uint32 each uses a fixed polynomial stand-in that ignores the
// parameters (these operators are never fingerprinted by the generator).
#include <limits>

#include "ops/families.h"
#include "ops/kernel_util.h"

namespace graphsub {
namespace {

// The float function of each operator, built from its attributes.
struct Clip {
  float lo, hi;
  explicit Clip(const Attrs& a)
      : lo(static_cast<float>(a.f("min"))), hi(static_cast<float>(a.f("max"))) {}
  float operator()(float x) const { return std::min(std::max(x, lo), hi); }
  static uint32_t standin(uint32_t x) { return x * (x * 107u + 109u) + 113u; }
};
struct HardSigmoid {
  float alpha, beta;
  explicit HardSigmoid(const Attrs& a)
      : alpha(static_cast<float>(a.f("alpha"))), beta(static_cast<float>(a.f("beta"))) {}
  float operator()(float x) const { return std::min(std::max(alpha * x + beta, 0.0f), 1.0f); }
  static uint32_t standin(uint32_t x) { return x * (x * 127u + 131u) + 137u; }
};
struct LeakyRelu {
  float alpha;
  explicit LeakyRelu(const Attrs& a) : alpha(static_cast<float>(a.f("alpha"))) {}
  float operator()(float x) const { return x < 0 ? alpha * x : x; }
  static uint32_t standin(uint32_t x) { return x * (x * 139u + 149u) + 151u; }
};
struct Pow {
  float e;
  explicit Pow(const Attrs& a) : e(static_cast<float>(a.f("exponent"))) {}
  float operator()(float x) const {
    if (e == 2.0f) return x * x;  // the common case, exactly as ONNX Runtime computes it
    return std::pow(x, e);
  }
  static uint32_t standin(uint32_t x) { return x * (x * 157u + 163u) + 167u; }
};

template <class F>
void kernel_param_f32(const KernelIO<float>& io) {
  F f(io.attrs);
  int64_t n = io.out_types[0].numel();
  for (int64_t i = 0; i < n; ++i) io.out[0][i] = f(io.in[0][i]);
}
template <class F>
void kernel_param_u32(const KernelIO<uint32_t>& io) {
  int64_t n = io.out_types[0].numel();
  for (int64_t i = 0; i < n; ++i) io.out[0][i] = F::standin(io.in[0][i]);
}

template <class F>
OpDef param_unary(const char* name, std::vector<AttrSpec> attrs) {
  return {.name = name,
          .min_inputs = 1,
          .max_inputs = 1,
          .attrs = std::move(attrs),
          .infer = same_as_first,
          .kernel_f32 = kernel_param_f32<F>,
          .kernel_u32 = kernel_param_u32<F>,
          .elementwise = true,
          .standin = true};
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
  defs.push_back(param_unary<Clip>("clip", {float_attr("min", -kInf), float_attr("max", kInf)}));
  defs.push_back(
      param_unary<HardSigmoid>("hardsigmoid", {float_attr("alpha", 0.2), float_attr("beta", 0.5)}));
  defs.push_back(param_unary<LeakyRelu>("leaky_relu", {float_attr("alpha", 0.01)}));
  defs.push_back(param_unary<Pow>("pow", {required_attr("exponent", AttrKind::Float)}));
  defs.push_back({.name = "prelu",
                  .min_inputs = 2,
                  .max_inputs = 2,
                  .infer = infer_prelu,
                  .kernel_f32 = kernel_prelu<float>,
                  .kernel_u32 = kernel_prelu<uint32_t>,
                  .elementwise = true,
                  .standin = true});
}

}  // namespace graphsub
