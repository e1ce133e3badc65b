// Element-wise operators on oneDNN eltwise and binary primitives. They work in whatever layout
// their first operand arrives in (a blocked conv output stays blocked through relu and add).
#include <fmt/format.h>

#include "exec_onednn/lower_ops.h"

namespace graphsub::onednn {

namespace {

using dnnl::algorithm;

// An eltwise algorithm with its alpha and beta.
struct Eltwise {
  algorithm alg;
  float alpha = 0.f, beta = 0.f;
};

Eltwise unary_alg(const std::string& op) {
  if (op == "relu6") return {algorithm::eltwise_clip_v2, 0.f, 6.f};
  // oneDNN 2.6's hardswish is ONNX's, x * min(max(x/6 + 1/2, 0), 1) (alpha, beta ignored).
  if (op == "hardswish") return {algorithm::eltwise_hardswish};
  if (op == "silu") return {algorithm::eltwise_swish, 1.f};  // x * sigmoid(alpha x)
  if (op == "relu") return {algorithm::eltwise_relu};
  if (op == "sigmoid") return {algorithm::eltwise_logistic};
  if (op == "tanh") return {algorithm::eltwise_tanh};
  if (op == "gelu") return {algorithm::eltwise_gelu_erf};
  if (op == "exp") return {algorithm::eltwise_exp};
  if (op == "sqrt") return {algorithm::eltwise_sqrt};
  throw NotLowered{"no eltwise algorithm for " + op};
}

algorithm binary_alg(const std::string& op) {
  if (op == "ewadd" || op == "add") return algorithm::binary_add;
  if (op == "ewmul" || op == "mul" || op == "smul") return algorithm::binary_mul;
  if (op == "sub") return algorithm::binary_sub;
  if (op == "div") return algorithm::binary_div;
  throw NotLowered{"no binary algorithm for " + op};
}

// dst = src0 (op) src1, dst in src0's layout; src1 already in a layout binary accepts.
std::string binary(Lowering& L, algorithm alg, const memory& src0, const memory& src1,
                   const dnnl::post_ops& post = {}) {
  memory::desc d0 = src0.get_desc();
  dnnl::primitive_attr attr;
  attr.set_post_ops(post);
  dnnl::binary::primitive_desc pd({alg, d0, src1.get_desc(), d0}, attr, L.engine());
  memory dst = L.out(0, pd.dst_desc());
  L.primitive(dnnl::binary(pd),
              {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}});
  return "binary";
}

// The eltwise primitive on the node's input, in whatever layout it arrives.
std::string eltwise(Lowering& L, Eltwise e) {
  memory src = L.in_as_is(0);
  dnnl::eltwise_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, e.alg, src.get_desc(), e.alpha, e.beta}, L.engine());
  memory dst = L.out(0, pd.dst_desc());
  L.primitive(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  return "eltwise";
}

}  // namespace

std::string lower_unary(Lowering& L) {
  return eltwise(L, unary_alg(L.node().op->name));
}

// The element-wise operators with attributes (activation_ops.cpp). oneDNN 2.6 has no
// hardsigmoid: it runs its reference kernel (in mobilenet_v3 it gates [N,C,1,1] tensors).
std::string lower_param_unary(Lowering& L) {
  const std::string& op = L.node().op->name;
  const Attrs& a = L.attrs();
  auto f = [&](const char* name) { return static_cast<float>(a.f(name)); };
  if (op == "clip") {
    // ONNX gives max where the bounds cross (min(max(x, lo), hi)); oneDNN does not say.
    if (f("min") > f("max")) throw NotLowered{"clip bounds cross"};
    return eltwise(L, {algorithm::eltwise_clip_v2, f("min"), f("max")});
  }
  if (op == "leaky_relu") return eltwise(L, {algorithm::eltwise_relu, f("alpha")});
  if (op == "pow") return eltwise(L, {algorithm::eltwise_pow, 1.f, f("exponent")});
  throw NotLowered{"no eltwise algorithm for " + op};
}

// prelu(x, slope) = x where x >= 0, slope * x elsewhere: oneDNN's prelu primitive, whose
// weights broadcast like a binary operand.
std::string lower_prelu(Lowering& L) {
  memory x = L.in_plain(0);
  size_t rank = std::max<size_t>(L.in_type(0).shape.size(), 1);
  memory w = L.view(L.in_plain(1), plain_desc(pad_front(L.in_type(1).shape, rank)));
  dnnl::prelu_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, x.get_desc(), w.get_desc()}, L.engine());
  memory dst = L.out(0, pd.dst_desc());
  L.primitive(dnnl::prelu_forward(pd),
              {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, dst}});
  return "prelu";
}

std::string lower_identity(Lowering& L) {
  L.out_alias(0, L.in_as_is(0));
  return "view";
}

std::string lower_binary_same(Lowering& L) {
  memory a = L.in_as_is(0);
  memory b = L.in(1, a.get_desc());
  return binary(L, binary_alg(L.node().op->name), a, b);
}

std::string lower_smul(Lowering& L) {
  memory x = L.in_as_is(0);
  // The 0-d scalar, viewed with x's rank and all dims 1: a broadcast operand.
  memory s = L.in_plain(1);
  memory sv = L.view(s, plain_desc(Dims(static_cast<size_t>(x.get_desc().dims().size()), 1)));
  return binary(L, dnnl::algorithm::binary_mul, x, sv);
}

// ONNX-style broadcasting. oneDNN broadcasts only its second operand, so the operand with the
// full output shape goes first; for sub with the broadcast operand first, b - a is computed
// and negated by a post-op. Other cases (both operands broadcast, div with a broadcast
// numerator) are left to the reference kernel.
std::string lower_binary_broadcast(Lowering& L) {
  const std::string& op = L.node().op->name;
  const Shape& out = L.out_type(0).shape;
  size_t rank = std::max<size_t>(out.size(), 1);
  bool a_full = L.in_type(0).shape == out, b_full = L.in_type(1).shape == out;
  if (a_full && b_full) return lower_binary_same(L);
  auto operand = [&](size_t i) {
    return L.view(L.in_plain(i), plain_desc(pad_front(L.in_type(i).shape, rank)));
  };
  if (a_full) return binary(L, binary_alg(op), L.in_plain(0), operand(1));
  if (!b_full) throw NotLowered{"both operands broadcast"};
  if (op == "add" || op == "mul") return binary(L, binary_alg(op), L.in_plain(1), operand(0));
  if (op == "sub") {
    dnnl::post_ops negate;
    negate.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, -1.f, 0.f);
    return binary(L, dnnl::algorithm::binary_sub, L.in_plain(1), operand(0), negate);
  }
  throw NotLowered{"broadcast numerator"};
}

}  // namespace graphsub::onednn
