// Convolution: grouped, strided, dilated, asymmetric pads, optional bias, fused activation as
// a post-op. Source, weights and destination use the layouts oneDNN prefers (format any):
// blocked activations flow from conv to conv, and constant weights are reordered once at
// compile time. conv_add adds its residual with the sum post-op, which accumulates into the
// destination: the destination is the residual's own buffer when nothing reads it any more,
// else a copy of it.
#include <fmt/format.h>

#include "exec_onednn/lower_ops.h"

namespace graphsub::onednn {

namespace {

// The convolution of the current node with `post` post-ops (after the bias); `bias` is the
// input index of the optional bias (0: none).
dnnl::convolution_forward::primitive_desc conv_desc(Lowering& L, const dnnl::post_ops& post,
                                                    size_t bias) {
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
  memory::desc bias_md = bias > 0 ? plain_desc(L.in_type(bias).shape) : memory::desc();
  dnnl::convolution_forward::desc d(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      any_desc(dims_of(xs)), any_desc(wdims), bias_md, any_desc(dims_of(os)),
      {stride[0], stride[1]}, {dil[0] - 1, dil[1] - 1}, {pads[0], pads[1]}, {pads[2], pads[3]});
  dnnl::primitive_attr attr;
  attr.set_post_ops(post);
  return {d, attr, L.engine()};
}

// Adds the convolution step writing into `dst` and describes it for the plan.
std::string run_conv(Lowering& L, const dnnl::convolution_forward::primitive_desc& pd, size_t bias,
                     const memory& dst) {
  std::unordered_map<int, memory> args;
  args[DNNL_ARG_SRC] = L.in(0, pd.src_desc());
  args[DNNL_ARG_WEIGHTS] = L.in(1, pd.weights_desc());
  if (bias > 0) args[DNNL_ARG_BIAS] = L.in(bias, plain_desc(L.in_type(bias).shape));
  args[DNNL_ARG_DST] = dst;
  L.primitive(dnnl::convolution_forward(pd), std::move(args));
  int64_t groups = L.in_type(0).shape[1] / L.in_type(1).shape[1];
  return fmt::format("convolution{} [src {}, weights {}, dst {}]",
                     groups > 1 ? fmt::format(" groups={}", groups) : "", desc_str(pd.src_desc()),
                     desc_str(pd.weights_desc()), desc_str(pd.dst_desc()));
}

// Whether some output position's window lies entirely in the padding (it sees only the bias).
// oneDNN 2.6 gets the sum post-op wrong at such positions: with a bias it left the sum out
// (a 2x3 kernel with pads 2 on top and bottom gave the bias alone on the first and last
// rows), and among 400 random small configurations without the guard some crashed. Models do
// not pad this much; such a conv_add runs its reference kernel.
bool window_in_padding_only(Lowering& L) {
  const Attrs& a = L.attrs();
  const Shape& xs = L.in_type(0).shape;
  const Shape& ws = L.in_type(1).shape;
  const Shape& os = L.out_type(0).shape;
  const auto& stride = a.ints("stride");
  const auto& pads = a.ints("pads");
  std::vector<int64_t> dil{1, 1};
  if (a.has("dilations")) dil = a.ints("dilations");
  for (size_t d = 0; d < 2; ++d) {
    int64_t extent = dil[d] * (ws[2 + d] - 1) + 1, in = xs[2 + d];
    int64_t first_end = extent - pads[d];  // one past the first window's last input position
    int64_t last_begin = (os[2 + d] - 1) * stride[d] - pads[d];
    if (first_end <= 0 || last_begin >= in) return true;
  }
  return false;
}

}  // namespace

std::string lower_conv(Lowering& L) {
  dnnl::post_ops post;
  append_act(post, L.attrs().s("act"));
  size_t bias = L.num_inputs() > 2 ? 2 : 0;
  auto pd = conv_desc(L, post, bias);
  return run_conv(L, pd, bias, L.out(0, pd.dst_desc()));
}

// conv_add(x, w, y [, b]): the sum post-op adds what the destination holds (y), then the
// activation applies.
std::string lower_conv_add(Lowering& L) {
  dnnl::post_ops post;
  post.append_sum(1.f);
  append_act(post, L.attrs().s("act"));
  size_t bias = L.num_inputs() > 3 ? 3 : 0;
  if (window_in_padding_only(L)) throw NotLowered{"a window lies in the padding only"};
  auto pd = conv_desc(L, post, bias);
  memory residual = L.in(2, pd.dst_desc());
  memory dst;
  std::string how;
  if (L.can_overwrite(2, residual)) {
    dst = residual;
    L.out_alias(0, dst);
    how = "in place";
  } else {
    dst = L.out(0, pd.dst_desc());
    L.primitive(dnnl::reorder(residual, dst), {{DNNL_ARG_FROM, residual}, {DNNL_ARG_TO, dst}});
    how = "on a copy";
  }
  return run_conv(L, pd, bias, dst) + " + sum " + how;
}

}  // namespace graphsub::onednn
