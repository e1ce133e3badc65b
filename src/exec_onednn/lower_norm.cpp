// Normalisations and reductions: batchnorm (inference, global statistics), softmax, layer
// normalisation (over the trailing axes, as one flattened axis), reduce_mean and reduce_sum.
#include <fmt/format.h>

#include "exec_onednn/lower_ops.h"
#include "ops/kernel_util.h"

namespace graphsub::onednn {

using dnnl::normalization_flags;

std::string lower_batchnorm(Lowering& L) {
  memory src = L.in_as_is(0);
  size_t rank = src.get_desc().dims().size();
  if (rank < 2 || rank > 5 || L.in_type(0).rank() < 2) throw NotLowered{"batchnorm rank"};
  float eps = static_cast<float>(L.attrs().f("epsilon"));
  auto flags = normalization_flags::use_global_stats | normalization_flags::use_scale |
               normalization_flags::use_shift;
  dnnl::batch_normalization_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, src.get_desc(), eps, flags}, L.engine());
  memory::desc channel = plain_desc(Dims{L.in_type(0).shape[1]});
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                       {DNNL_ARG_SCALE, L.in(1, channel)},
                                       {DNNL_ARG_SHIFT, L.in(2, channel)},
                                       {DNNL_ARG_MEAN, L.in(3, channel)},
                                       {DNNL_ARG_VARIANCE, L.in(4, channel)}};
  args[DNNL_ARG_DST] = L.out(0, pd.dst_desc());
  L.primitive(dnnl::batch_normalization_forward(pd), std::move(args));
  return "batch normalization";
}

std::string lower_softmax(Lowering& L) {
  int64_t rank = L.in_type(0).rank();
  if (rank == 0) throw NotLowered{"softmax of a scalar"};
  int axis = static_cast<int>(norm_axis("softmax", L.attrs().i("axis"), rank));
  memory src = L.in_plain(0);
  dnnl::softmax_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, src.get_desc(), axis}, L.engine());
  memory dst = L.out(0, pd.dst_desc());
  L.primitive(dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  return "softmax";
}

// x viewed as [outer, inner] where inner spans the axes from `axis` on; oneDNN normalises
// the last axis with scale/shift of that size.
std::string lower_layernorm(Lowering& L) {
  const Shape& xs = L.in_type(0).shape;
  int64_t rank = static_cast<int64_t>(xs.size());
  if (rank == 0) throw NotLowered{"layernorm of a scalar"};
  size_t axis = static_cast<size_t>(norm_axis("layernorm", L.attrs().i("axis"), rank));
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < xs.size(); ++i) (i < axis ? outer : inner) *= xs[i];
  if (L.in_type(1).numel() != inner) throw NotLowered{"scale does not span the normalised axes"};
  bool has_bias = L.num_inputs() > 2;
  if (has_bias && L.in_type(2).numel() != inner)
    throw NotLowered{"bias does not span the normalised axes"};
  Dims flat{outer, inner};
  float eps = static_cast<float>(L.attrs().f("epsilon"));
  auto flags = normalization_flags::use_scale;
  if (has_bias) flags = flags | normalization_flags::use_shift;
  dnnl::layer_normalization_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, plain_desc(flat), eps, flags}, L.engine());
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, L.in(0, plain_desc(flat))},
                                       {DNNL_ARG_SCALE, L.in(1, plain_desc(Dims{inner}))}};
  if (has_bias) args[DNNL_ARG_SHIFT] = L.in(2, plain_desc(Dims{inner}));
  args[DNNL_ARG_DST] = L.view(L.out_plain(0), plain_desc(flat));
  L.primitive(dnnl::layer_normalization_forward(pd), std::move(args));
  return "layer normalization";
}

std::string lower_reduce(Lowering& L) {
  const Shape& xs = L.in_type(0).shape;
  int64_t rank = static_cast<int64_t>(xs.size());
  if (rank == 0) throw NotLowered{"reduce of a scalar"};
  // The reduced shape with kept (size-1) axes; without keepdims the output is a view of it.
  Dims kept = dims_of(xs);
  const auto& axes = L.attrs().ints("axes");
  if (axes.empty()) {
    kept.assign(kept.size(), 1);
  } else {
    for (auto a : axes) kept[static_cast<size_t>(norm_axis("reduce", a, rank))] = 1;
  }
  if (kept == dims_of(xs)) throw NotLowered{"nothing to reduce"};
  memory src = L.in_plain(0);
  dnnl::reduction::primitive_desc pd(
      {L.node().op->name == "reduce_sum" ? dnnl::algorithm::reduction_sum
                                         : dnnl::algorithm::reduction_mean,
       src.get_desc(), plain_desc(kept), 0.f, 0.f},
      L.engine());
  memory dst = L.view(L.out_plain(0), plain_desc(kept));
  L.primitive(dnnl::reduction(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  return "reduction";
}

}  // namespace graphsub::onednn
