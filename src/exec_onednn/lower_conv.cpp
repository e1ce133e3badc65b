// Convolution: grouped, strided, dilated, asymmetric pads, optional bias, fused activation as
// a post-op. Source, weights and destination use the layouts oneDNN prefers (format any):
// blocked activations flow from conv to conv, and constant weights are reordered once at
// compile time.
#include <fmt/format.h>

#include "exec_onednn/lower_ops.h"

namespace graphsub::onednn {

std::string lower_conv(Lowering& L) {
  const Attrs& a = L.attrs();
  const Shape& xs = L.in_type(0).shape;
  const Shape& ws = L.in_type(1).shape;
  const Shape& os = L.out_type(0).shape;
  if (xs.size() != 4 || ws.size() != 4) throw NotLowered{"conv is 2-d only"};
  int64_t groups = xs[1] / ws[1];
  const auto& stride = a.ints("stride");
  const auto& pads = a.ints("pads");
  std::vector<int64_t> dil{1, 1};
  if (a.has("dilations")) dil = a.ints("dilations");

  Dims wdims =
      groups == 1 ? Dims(ws.begin(), ws.end()) : Dims{groups, ws[0] / groups, ws[1], ws[2], ws[3]};
  bool has_bias = L.num_inputs() > 2;
  memory::desc bias_md = has_bias ? plain_desc(L.in_type(2).shape) : memory::desc();
  dnnl::convolution_forward::desc d(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      any_desc(dims_of(xs)), any_desc(wdims), bias_md, any_desc(dims_of(os)),
      {stride[0], stride[1]}, {dil[0] - 1, dil[1] - 1}, {pads[0], pads[1]}, {pads[2], pads[3]});
  dnnl::post_ops post;
  append_act(post, a.s("act"));
  dnnl::primitive_attr attr;
  attr.set_post_ops(post);
  dnnl::convolution_forward::primitive_desc pd(d, attr, L.engine());

  std::unordered_map<int, memory> args;
  args[DNNL_ARG_SRC] = L.in(0, pd.src_desc());
  args[DNNL_ARG_WEIGHTS] = L.in(1, pd.weights_desc());
  if (has_bias) args[DNNL_ARG_BIAS] = L.in(2, bias_md);
  args[DNNL_ARG_DST] = L.out(0, pd.dst_desc());
  L.primitive(dnnl::convolution_forward(pd), std::move(args));
  return fmt::format("convolution{} [src {}, weights {}, dst {}]",
                     groups > 1 ? fmt::format(" groups={}", groups) : "", desc_str(pd.src_desc()),
                     desc_str(pd.weights_desc()), desc_str(pd.dst_desc()));
}

}  // namespace graphsub::onednn
