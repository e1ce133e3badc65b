// Pooling: average (count_include_pad chooses include/exclude padding), max, and global
// average. They take their input in any layout (blocked conv outputs stay blocked).
#include "exec_onednn/lower_ops.h"

namespace graphsub::onednn {

namespace {

std::string pooling(Lowering& L, dnnl::algorithm alg, const Dims& kernel, const Dims& stride,
                    const Dims& pad_l, const Dims& pad_r) {
  memory src = L.in_as_is(0);
  if (src.get_desc().dims().size() != 4) throw NotLowered{"pooling is 2-d only"};
  dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, src.get_desc(),
                                   any_desc(dims_of(L.out_type(0).shape)), stride, kernel, {0, 0},
                                   pad_l, pad_r);
  dnnl::pooling_v2_forward::primitive_desc pd(d, L.engine());
  memory dst = L.out(0, pd.dst_desc());
  L.primitive(dnnl::pooling_v2_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  return "pooling";
}

}  // namespace

std::string lower_pool(Lowering& L) {
  const Attrs& a = L.attrs();
  const auto& k = a.ints("kernel");
  const auto& s = a.ints("stride");
  const auto& p = a.ints("pads");
  if (a.has("dilations")) {
    const auto& dil = a.ints("dilations");
    for (auto v : dil)
      if (v != 1) throw NotLowered{"dilated pooling"};
  }
  dnnl::algorithm alg = dnnl::algorithm::pooling_max;
  if (L.node().op->name == "poolavg")
    alg = a.i("count_include_pad") ? dnnl::algorithm::pooling_avg_include_padding
                                   : dnnl::algorithm::pooling_avg_exclude_padding;
  return pooling(L, alg, {k[0], k[1]}, {s[0], s[1]}, {p[0], p[1]}, {p[2], p[3]});
}

std::string lower_global_avgpool(Lowering& L) {
  const Shape& x = L.in_type(0).shape;
  if (x.size() != 4) throw NotLowered{"global pooling is 2-d only"};
  return pooling(L, dnnl::algorithm::pooling_avg_exclude_padding, {x[2], x[3]}, {1, 1}, {0, 0},
                 {0, 0});
}

}  // namespace graphsub::onednn
