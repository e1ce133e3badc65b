// concat and split: the operators that create and consume split points. concat records where
// it joined its parts (a tree when concats nest); split without sizes cuts exactly there and
// hands each part its own subtree, which is what makes split(concat(x, y)) = x a valid rule.
#include "ops/families.h"
#include "ops/kernel_util.h"
#include "ops/split_trees.h"

namespace graphsub {
namespace {

// Elements before / after `axis` in a row-major shape.
int64_t outer_of(const Shape& s, int64_t axis) {
  return numel(Shape(s.begin(), s.begin() + axis));
}
int64_t inner_of(const Shape& s, int64_t axis) {
  return numel(Shape(s.begin() + axis + 1, s.end()));
}

// ---- concat ----
std::vector<TensorType> infer_concat(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& first = in[0];
  int64_t axis = norm_axis("concat", a.i("axis"), first.rank());
  Shape s = first.shape;
  std::vector<SplitTreePtr> trees;
  std::vector<int64_t> sizes;
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape& si = in[i].shape;
    bool same_rest = si.size() == s.size();
    for (size_t d = 0; same_rest && d < s.size(); ++d)
      if (static_cast<int64_t>(d) != axis && si[d] != first.shape[d]) same_rest = false;
    if (!same_rest)
      throw Error(
          fmt::format("concat: input {} has shape {}, which differs from {} outside axis {}", i,
                      shape_str(si), shape_str(first.shape), axis));
    if (i > 0) s[static_cast<size_t>(axis)] += si[static_cast<size_t>(axis)];
    trees.push_back(in[i].split(static_cast<size_t>(axis)));
    sizes.push_back(si[static_cast<size_t>(axis)]);
  }
  TensorType out = derived_type(first, std::move(s));
  out.splits = first.splits;
  out.splits.resize(out.shape.size());
  keep_common_splits(out, in);  // other axes: kept where all parts agree
  out.set_split(static_cast<size_t>(axis), concat_split_tree(trees, sizes));
  tidy_splits(out);
  return {out};
}

template <class T>
void kernel_concat(const KernelIO<T>& io) {
  const Shape& os = io.out_types[0].shape;
  int64_t axis = norm_axis("concat", io.attrs.i("axis"), static_cast<int64_t>(os.size()));
  int64_t outer = outer_of(os, axis), inner = inner_of(os, axis);
  int64_t row = os[static_cast<size_t>(axis)] * inner;
  int64_t offset = 0;
  for (size_t i = 0; i < io.in.size(); ++i) {
    int64_t chunk = io.in_types[i].shape[static_cast<size_t>(axis)] * inner;
    for (int64_t o = 0; o < outer; ++o)
      std::copy(io.in[i] + o * chunk, io.in[i] + (o + 1) * chunk, io.out[0] + o * row + offset);
    offset += chunk;
  }
}

Attrs axis_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  return {{"axis", param_int("axis", p, 0)}};
}

std::optional<std::vector<AxiomParam>> concat_attrs_to_params(const Attrs& a,
                                                              std::span<const TensorType> in) {
  if (in.size() != 2) return std::nullopt;  // the axiom language's concat is binary
  return std::vector<AxiomParam>{norm_axis("concat", a.i("axis"), in[0].rank())};
}

// ---- split ----
// Part sizes: explicit, or the two sides of the recorded cut.
std::vector<int64_t> split_sizes(const Attrs& a, const TensorType& x, int64_t axis) {
  int64_t dim = x.shape[static_cast<size_t>(axis)];
  std::vector<int64_t> sizes = a.ints("sizes");
  if (sizes.empty()) {
    SplitTreePtr t = x.split(static_cast<size_t>(axis));
    if (!t)
      throw Error(fmt::format("split: {} has no recorded split point on axis {}; give sizes",
                              x.str(), axis));
    return {t->cut, dim - t->cut};
  }
  if (sizes.size() < 2)
    throw Error(fmt::format("split: sizes {} must name at least 2 parts", shape_str(sizes)));
  for (int64_t s : sizes)
    if (s < 1) throw Error(fmt::format("split: sizes {} must be positive", shape_str(sizes)));
  int64_t total = 0;
  for (int64_t s : sizes) {
    // Checked before adding: sizes past the axis would otherwise overflow the sum.
    if (s > dim - total)
      throw Error(fmt::format("split: sizes {} add up to more than axis {} of {} ({})",
                              shape_str(sizes), axis, shape_str(x.shape), dim));
    total += s;
  }
  if (total != dim)
    throw Error(fmt::format("split: sizes {} add up to {}, but axis {} of {} has {}",
                            shape_str(sizes), total, axis, shape_str(x.shape), dim));
  return sizes;
}

std::vector<TensorType> infer_split(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  int64_t axis = norm_axis("split", a.i("axis"), x.rank());
  auto sizes = split_sizes(a, x, axis);
  size_t ax = static_cast<size_t>(axis);
  std::vector<TensorType> outs;
  int64_t lo = 0;
  for (int64_t size : sizes) {
    Shape s = x.shape;
    s[ax] = size;
    TensorType t = derived_type(x, std::move(s));
    t.splits = x.splits;
    t.set_split(ax, split_subtree(x.split(ax), x.shape[ax], lo, lo + size));
    tidy_splits(t);
    outs.push_back(std::move(t));
    lo += size;
  }
  return outs;
}

template <class T>
void kernel_split(const KernelIO<T>& io) {
  const Shape& xs = io.in_types[0].shape;
  int64_t axis = norm_axis("split", io.attrs.i("axis"), static_cast<int64_t>(xs.size()));
  int64_t outer = outer_of(xs, axis), inner = inner_of(xs, axis);
  int64_t row = xs[static_cast<size_t>(axis)] * inner;
  int64_t offset = 0;
  for (size_t i = 0; i < io.out.size(); ++i) {
    int64_t chunk = io.out_types[i].shape[static_cast<size_t>(axis)] * inner;
    for (int64_t o = 0; o < outer; ++o)
      std::copy(io.in[0] + o * row + offset, io.in[0] + o * row + offset + chunk,
                io.out[i] + o * chunk);
    offset += chunk;
  }
}

// (split0 a x) / (split1 a x): two parts cut at the recorded point.
std::optional<std::vector<AxiomParam>> split_attrs_to_params(const Attrs& a,
                                                             std::span<const TensorType> in) {
  int64_t axis = norm_axis("split", a.i("axis"), in[0].rank());
  const auto& sizes = a.ints("sizes");
  if (!sizes.empty()) {
    SplitTreePtr t = in[0].split(static_cast<size_t>(axis));
    if (!t || sizes.size() != 2 || sizes[0] != t->cut) return std::nullopt;
  }
  return std::vector<AxiomParam>{axis};
}

}  // namespace

void register_shape_ops(std::vector<OpDef>& defs) {
  defs.push_back({.name = "concat",
                  .axiom_name = "concat",
                  .min_inputs = 1,
                  .max_inputs = -1,
                  .attrs = {required_attr("axis", AttrKind::Int)},
                  .infer = infer_concat,
                  .kernel_f32 = kernel_concat<float>,
                  .kernel_u32 = kernel_concat<uint32_t>,
                  .cost = copy_cost,
                  .axiom_params = {"axis"},
                  .params_to_attrs = axis_params_to_attrs,
                  .attrs_to_params = concat_attrs_to_params});
  defs.push_back({.name = "split",
                  .axiom_name = "split",
                  .min_inputs = 1,
                  .max_inputs = 1,
                  .attrs = {required_attr("axis", AttrKind::Int), ints_attr("sizes")},
                  .infer = infer_split,
                  .kernel_f32 = kernel_split<float>,
                  .kernel_u32 = kernel_split<uint32_t>,
                  .cost = copy_cost,
                  .axiom_params = {"axis"},
                  .params_to_attrs = axis_params_to_attrs,
                  .attrs_to_params = split_attrs_to_params,
                  .axiom_outputs = {"split0", "split1"}});
}

}  // namespace graphsub
