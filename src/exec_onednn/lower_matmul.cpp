// Matmul (batched, weights broadcast over the batch, optional bias, fused activation) and
// transpose (a reorder from a permuted-strides view of the input).
#include <fmt/format.h>

#include "exec_onednn/lower_ops.h"
#include "ops/kernel_util.h"

namespace graphsub::onednn {

std::string lower_matmul(Lowering& L) {
  const Shape& as = L.in_type(0).shape;
  const Shape& bs = L.in_type(1).shape;
  const Shape& os = L.out_type(0).shape;
  if (as.size() < 2 || bs.size() < 2) throw NotLowered{"matmul operands of rank < 2"};
  size_t rank = os.size();
  Dims a_dims = pad_front(as, rank), b_dims = pad_front(bs, rank), o_dims = dims_of(os);
  bool has_bias = L.num_inputs() > 2;
  Dims bias_dims(rank, 1);
  bias_dims.back() = o_dims.back();
  memory::desc bias_md = has_bias ? plain_desc(bias_dims) : memory::desc();
  // Constant weights are packed once in oneDNN's preferred layout; others stay row-major.
  bool pack = L.in_constant(1);
  memory::desc w_md = pack ? any_desc(b_dims) : plain_desc(b_dims);
  dnnl::matmul::desc d(plain_desc(a_dims), w_md, bias_md, plain_desc(o_dims));
  dnnl::post_ops post;
  append_act(post, L.attrs().s("act"));
  dnnl::primitive_attr attr;
  attr.set_post_ops(post);
  dnnl::matmul::primitive_desc pd(d, attr, L.engine());

  std::unordered_map<int, memory> args;
  args[DNNL_ARG_SRC] = L.in(0, plain_desc(a_dims));
  args[DNNL_ARG_WEIGHTS] = L.in(1, pd.weights_desc());
  if (has_bias) args[DNNL_ARG_BIAS] = L.in(2, bias_md);
  args[DNNL_ARG_DST] = L.out(0, pd.dst_desc());
  L.primitive(dnnl::matmul(pd), std::move(args));
  return fmt::format("matmul [weights {}]", desc_str(pd.weights_desc()));
}

std::string lower_transpose(Lowering& L) {
  const Shape& in = L.in_type(0).shape;
  const Shape& out = L.out_type(0).shape;
  int64_t rank = static_cast<int64_t>(in.size());
  if (rank == 0) return lower_identity(L);
  std::vector<int64_t> perm = L.attrs().ints("perm");
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  std::vector<int64_t> in_strides = strides_of(in);
  Dims view_strides(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i)
    view_strides[static_cast<size_t>(i)] =
        in_strides[static_cast<size_t>(norm_axis("transpose", perm[static_cast<size_t>(i)], rank))];
  memory src =
      L.view(L.in_plain(0), memory::desc(dims_of(out), memory::data_type::f32, view_strides));
  memory dst = L.out_plain(0);
  L.primitive(dnnl::reorder(src, dst), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
  return "reorder (transpose)";
}

}  // namespace graphsub::onednn
