// Element-wise operators on oneDNN eltwise and binary primitives. They work in whatever layout
// their first operand arrives in (a blocked conv output stays blocked through relu and add).
#include <fmt/format.h>

#include "exec_onednn/lower_ops.h"

namespace graphsub::onednn {

namespace {

using dnnl::algorithm;

algorithm unary_alg(const std::string& op) {
  if (op == "relu") return algorithm::eltwise_relu;
  if (op == "sigmoid") return algorithm::eltwise_logistic;
  if (op == "tanh") return algorithm::eltwise_tanh;
  if (op == "gelu") return algorithm::eltwise_gelu_erf;
  if (op == "exp") return algorithm::eltwise_exp;
  if (op == "sqrt") return algorithm::eltwise_sqrt;
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

}  // namespace

std::string lower_unary(Lowering& L) {
  memory src = L.in_as_is(0);
  dnnl::eltwise_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, unary_alg(L.node().op->name), src.get_desc(), 0.f, 0.f},
      L.engine());
  memory dst = L.out(0, pd.dst_desc());
  L.primitive(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  return "eltwise";
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
