// Data movement: concat (nothing when its producers wrote in place, else reorders into an
// output in its inputs' shared layout, else a oneDNN concat of inputs in any layout), split
// (zero-copy views where the parts are contiguous, blocked channel splits kept blocked, else
// reorders from sub-memory views), reshape and flatten (zero-copy views of row-major data).
#include "exec_onednn/lower_ops.h"
#include "ops/kernel_util.h"

namespace graphsub::onednn {

namespace {

// Layouts a channel split or concat keeps: the blocked ones convolutions write, with their
// channel block, and channels-last. A part must start and end on a block.
struct ChannelLayout {
  Tag tag;
  int64_t block;
};
constexpr ChannelLayout kChannelLayouts[] = {
    {Tag::nChw16c, 16}, {Tag::nChw8c, 8}, {Tag::nChw4c, 4}, {Tag::nhwc, 1}};

// The layout of `md` among kChannelLayouts, or null.
const ChannelLayout* channel_layout(const memory::desc& md) {
  Dims dims = md.dims();
  if (dims.size() != 4) return nullptr;
  for (const auto& l : kChannelLayouts)
    if (memory::desc(dims, memory::data_type::f32, l.tag) == md) return &l;
  return nullptr;
}

// A concat whose inputs all share one layout (row-major, or a channel layout with every part
// on whole blocks): each input is reordered into its place in an output of that layout. This
// is a plain copy per input; oneDNN 2.6's concat primitive ran such a concat of five blocked
// [1,128,56,56] tensors in 4.4 ms on one thread of an AVX2 machine, these reorders in 0.33 ms
// (bench/bench_layout_probes). Returns false when the inputs' layouts differ.
bool concat_by_reorders(Lowering& L, const std::vector<memory>& srcs, int axis) {
  const memory::desc first = srcs[0].get_desc();
  const ChannelLayout* layout = is_plain(first) ? nullptr : channel_layout(first);
  if (!is_plain(first) && (!layout || axis != 1)) return false;
  for (const auto& m : srcs) {
    const memory::desc md = m.get_desc();
    if (layout ? channel_layout(md) != layout : !is_plain(md)) return false;
    if (layout && md.dims()[1] % layout->block) return false;
  }
  Dims dims = dims_of(L.out_type(0).shape);
  memory::desc whole = layout ? memory::desc(dims, memory::data_type::f32, layout->tag)
                              : plain_desc(L.out_type(0).shape);
  memory dst = L.out(0, whole);
  int64_t offset = 0;
  for (const auto& src : srcs) {
    Dims part = src.get_desc().dims();
    Dims offsets(dims.size(), 0);
    offsets[static_cast<size_t>(axis)] = offset;
    offset += part[static_cast<size_t>(axis)];
    memory view = L.view(dst, whole.submemory_desc(part, offsets));
    L.primitive(dnnl::reorder(src, view), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, view}});
  }
  if (offset != dims[static_cast<size_t>(axis)])
    throw NotLowered{"concat inputs do not fill the output"};
  return true;
}

}  // namespace

std::string lower_concat(Lowering& L) {
  int64_t rank = L.in_type(0).rank();
  if (rank == 0) throw NotLowered{"concat of scalars"};
  int axis = static_cast<int>(norm_axis("concat", L.attrs().i("axis"), rank));
  if (memory joined = L.concat_in_place()) {
    L.out_alias(0, joined);
    return "view";
  }
  std::vector<memory> srcs;
  std::vector<memory::desc> mds;
  for (size_t i = 0; i < L.num_inputs(); ++i) {
    srcs.push_back(L.in_as_is(i));
    mds.push_back(srcs.back().get_desc());
  }
  if (concat_by_reorders(L, srcs, axis)) return "reorder (concat)";
  dnnl::concat::primitive_desc pd(axis, mds, L.engine());
  std::unordered_map<int, memory> args;
  for (size_t i = 0; i < srcs.size(); ++i)
    args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = srcs[i];
  args[DNNL_ARG_DST] = L.out(0, pd.dst_desc());
  L.primitive(dnnl::concat(pd), std::move(args));
  return "concat";
}

namespace {

// A channel split of a convolution's output in a blocked layout (nChw16c, ...): each part is
// copied into the same layout, which its convolution consumers take as it is. Going through
// row-major data instead costs a conversion of the whole tensor plus one per consumer.
// Returns false when the layout or the cut points do not allow it (cuts must fall on blocks).
bool split_blocked(Lowering& L, const memory& src, size_t axis) {
  const memory::desc whole = src.get_desc();
  const ChannelLayout* layout = channel_layout(whole);
  if (!layout || axis != 1) return false;
  Dims dims = whole.dims();
  for (size_t i = 0; i < L.node().outputs.size(); ++i)
    if (L.out_type(i).shape[axis] % layout->block) return false;
  int64_t offset = 0;
  for (size_t i = 0; i < L.node().outputs.size(); ++i) {
    Dims part = dims_of(L.out_type(i).shape);
    Dims offsets(4, 0);
    offsets[axis] = offset;
    offset += part[axis];
    memory view = L.view(src, whole.submemory_desc(part, offsets));
    memory dst = L.out(i, memory::desc(part, memory::data_type::f32, layout->tag));
    L.primitive(dnnl::reorder(view, dst), {{DNNL_ARG_FROM, view}, {DNNL_ARG_TO, dst}});
  }
  if (offset != dims[axis]) throw NotLowered{"split parts do not cover the input"};
  return true;
}

}  // namespace

// Each output is the next block of the input along the axis; the block sizes are the
// outputs' own extents, so the cut points follow shape inference exactly.
std::string lower_split(Lowering& L) {
  const Shape& in = L.in_type(0).shape;
  int64_t rank = static_cast<int64_t>(in.size());
  if (rank == 0) throw NotLowered{"split of a scalar"};
  size_t axis = static_cast<size_t>(norm_axis("split", L.attrs().i("axis"), rank));
  if (!is_plain(L.in_as_is(0).get_desc()) && split_blocked(L, L.in_as_is(0), axis))
    return "reorder (split, blocked)";
  memory src = L.in_plain(0);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= in[d];
  for (size_t d = axis + 1; d < in.size(); ++d) inner *= in[d];
  if (outer == 1) {  // each part is a contiguous range of the input: a view, no copy
    int64_t start = 0;
    for (size_t i = 0; i < L.node().outputs.size(); ++i) {
      const Shape& part = L.out_type(i).shape;
      L.out_alias(
          i, L.view(src, plain_desc(part), static_cast<size_t>(start * inner) * sizeof(float)));
      start += part[axis];
    }
    if (start != in[axis]) throw NotLowered{"split parts do not cover the input"};
    return "view";
  }
  memory::desc whole = src.get_desc();
  int64_t offset = 0;
  for (size_t i = 0; i < L.node().outputs.size(); ++i) {
    Dims part = dims_of(L.out_type(i).shape);
    Dims offsets(static_cast<size_t>(rank), 0);
    offsets[axis] = offset;
    offset += part[axis];
    memory view = L.view(src, whole.submemory_desc(part, offsets));
    memory dst = L.out_plain(i);
    L.primitive(dnnl::reorder(view, dst), {{DNNL_ARG_FROM, view}, {DNNL_ARG_TO, dst}});
  }
  if (offset != in[axis]) throw NotLowered{"split parts do not cover the input"};
  return "reorder (split)";
}

std::string lower_reshape(Lowering& L) {
  L.out_alias(0, L.view(L.in_plain(0), plain_desc(L.out_type(0).shape)));
  return "view";
}

}  // namespace graphsub::onednn
