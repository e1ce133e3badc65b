// Operators that rearrange or crop data without arithmetic: reshape, flatten (views of the
// same row-major buffer), pad (explicit begins/ends, negative values crop) and slice (ONNX
// semantics: negative indices, clamping, steps).
#include "ops/families.h"
#include "ops/kernel_util.h"
#include "ops/split_trees.h"

namespace graphsub {
namespace {

// Axes whose leading dimensions (that axis included) are unchanged keep their meaning in
// row-major order, and therefore their split trees.
void keep_prefix_splits(TensorType& out, const TensorType& in) {
  for (size_t a = 0; a < out.shape.size() && a < in.shape.size(); ++a) {
    if (out.shape[a] != in.shape[a]) break;
    out.set_split(a, in.split(a));
  }
  tidy_splits(out);
}

template <class T>
void kernel_copy(const KernelIO<T>& io) {
  std::copy(io.in[0], io.in[0] + io.in_types[0].numel(), io.out[0]);
}

// ---- reshape: one -1 inferred, 0 copies the input dimension ----
std::vector<TensorType> infer_reshape(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  const auto& spec = a.ints("shape");
  Shape s;
  int64_t infer_at = -1, known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == 0) {
      if (i >= x.shape.size())
        throw Error(fmt::format("reshape: shape {} copies dimension {} (0), but {} has rank {}",
                                shape_str(spec), i, shape_str(x.shape), x.rank()));
      d = x.shape[i];
    } else if (d == -1) {
      if (infer_at >= 0)
        throw Error(fmt::format("reshape: shape {} has more than one -1", shape_str(spec)));
      infer_at = static_cast<int64_t>(i);
    } else if (d < -1) {
      throw Error(fmt::format("reshape: shape {} has a negative dimension", shape_str(spec)));
    }
    if (d != -1) {
      auto k = checked_mul(known, d);
      if (!k)
        throw Error(
            fmt::format("reshape: target shape {} has more than 2^60 elements", shape_str(spec)));
      known = *k;
    }
    s.push_back(d);
  }
  if (infer_at >= 0) {
    if (known == 0 || x.numel() % known != 0)
      throw Error(fmt::format("reshape: cannot infer the -1 in {} for {} ({} elements)",
                              shape_str(spec), shape_str(x.shape), x.numel()));
    s[static_cast<size_t>(infer_at)] = x.numel() / known;
  }
  if (numel(s) != x.numel())
    throw Error(fmt::format("reshape: {} has {} elements, target shape {} has {}",
                            shape_str(x.shape), x.numel(), shape_str(s), numel(s)));
  TensorType out = derived_type(x, std::move(s));
  keep_prefix_splits(out, x);
  return {out};
}

// In the axiom language a reshape is (merge_axes a x), axes a and a + 1 made one, or
// (split_axis a n x), axis a made two of n and the rest: a batch of sequences' hidden axis
// split into heads and joined back. Other reshapes lie outside the language.
Shape merged_shape(const Shape& s, size_t a) {
  Shape out(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(a));
  out.push_back(s[a] * s[a + 1]);
  out.insert(out.end(), s.begin() + static_cast<std::ptrdiff_t>(a) + 2, s.end());
  return out;
}

Attrs reshape_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType> in) {
  if (in.empty() || (p.size() != 1 && p.size() != 2))
    throw Error("reshape: the language's forms need the input's type and an axis");
  const Shape& s = in[0].shape;
  int64_t a = std::get<int64_t>(p[0]);
  bool split = p.size() == 2;
  if (a < 0 || a + (split ? 0 : 1) >= static_cast<int64_t>(s.size()))
    throw Error(fmt::format("reshape: axis {} out of range for {}", a, shape_str(s)));
  auto at = static_cast<size_t>(a);
  if (!split) return {{"shape", merged_shape(s, at)}};
  int64_t n = std::get<int64_t>(p[1]);
  if (n < 1 || s[at] % n != 0)
    throw Error(fmt::format("reshape: {} parts do not divide axis {} of {}", n, a, shape_str(s)));
  Shape out = s;
  out[at] = s[at] / n;
  out.insert(out.begin() + a, n);
  return {{"shape", out}};
}

std::optional<std::vector<AxiomParam>> reshape_attrs_to_params(const Attrs& a,
                                                               std::span<const TensorType> in) {
  const Shape& s = in[0].shape;
  const Shape out = infer_reshape(a, in)[0].shape;
  // The first axis whose merge gives the other shape (where axes of size 1 make several fit,
  // they denote the same reshape).
  for (size_t k = 0; k + 1 < s.size() && out.size() + 1 == s.size(); ++k)
    if (out == merged_shape(s, k)) return std::vector<AxiomParam>{static_cast<int64_t>(k)};
  for (size_t k = 0; k + 1 < out.size() && s.size() + 1 == out.size(); ++k)
    if (s == merged_shape(out, k)) return std::vector<AxiomParam>{static_cast<int64_t>(k), out[k]};
  return std::nullopt;
}

// ---- flatten: [d0..d(axis-1)] x [d(axis)..] -> 2-d ----
std::vector<TensorType> infer_flatten(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  int64_t axis = a.i("axis");
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis > x.rank())
    throw Error(
        fmt::format("flatten: axis {} out of range for {}", a.i("axis"), shape_str(x.shape)));
  int64_t rows = numel(Shape(x.shape.begin(), x.shape.begin() + axis));
  TensorType out = derived_type(x, {rows, x.numel() / std::max<int64_t>(rows, 1)});
  keep_prefix_splits(out, x);
  return {out};
}

// ---- pad: pads = [begin_0..begin_(r-1), end_0..end_(r-1)] ----
std::vector<TensorType> infer_pad(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  const auto& p = a.ints("pads");
  size_t r = x.shape.size();
  if (p.size() != 2 * r)
    throw Error(fmt::format("pad: pads {} must have 2*rank = {} values for {}", shape_str(p), 2 * r,
                            shape_str(x.shape)));
  Shape s = x.shape;
  for (size_t d = 0; d < r; ++d) {
    // Checked: pads near the int64 limits (found by fuzzing) must fail, not wrap. Pads may
    // be negative (cropping), so the sizes' checked_add does not apply.
    int64_t size = 0;
    if (__builtin_add_overflow(s[d], p[d], &size) ||
        __builtin_add_overflow(size, p[d + r], &size) || size > kMaxElements)
      throw Error(
          fmt::format("pad: pads {} overflow axis {} of {}", shape_str(p), d, shape_str(x.shape)));
    s[d] = size;
    if (s[d] < 1)
      throw Error(fmt::format("pad: pads {} leave axis {} of {} empty", shape_str(p), d,
                              shape_str(x.shape)));
  }
  TensorType out = derived_type(x, std::move(s));
  for (size_t d = 0; d < r; ++d)
    if (p[d] == 0 && p[d + r] == 0) out.set_split(d, x.split(d));
  tidy_splits(out);
  return {out};
}

template <class T>
void kernel_pad(const KernelIO<T>& io) {
  const Shape& xs = io.in_types[0].shape;
  const Shape& os = io.out_types[0].shape;
  const auto& p = io.attrs.ints("pads");
  size_t r = xs.size();
  std::fill(io.out[0], io.out[0] + numel(os), Scalar<T>::from_double(io.attrs.f("value")));
  if (r == 0) {
    io.out[0][0] = io.in[0][0];
    return;
  }
  auto ost = strides_of(os);
  // Copy row by row (last axis contiguous); rows whose leading index is cropped are skipped.
  int64_t last = xs[r - 1], begin = p[r - 1];
  int64_t x0 = std::max<int64_t>(0, -begin), x1 = std::min(last, os[r - 1] - begin);
  std::vector<int64_t> idx(r - 1, 0);
  int64_t rows = last == 0 ? 0 : numel(xs) / last;  // an empty input: only the pad value
  for (int64_t row = 0; row < rows; ++row) {
    int64_t dst = 0;
    bool inside = true;
    for (size_t d = 0; d + 1 < r; ++d) {
      int64_t o = idx[d] + p[d];
      if (o < 0 || o >= os[d]) inside = false;
      dst += o * ost[d];
    }
    if (inside)
      for (int64_t x = x0; x < x1; ++x) io.out[0][dst + x + begin] = io.in[0][row * last + x];
    for (int64_t d = static_cast<int64_t>(r) - 2; d >= 0; --d) {  // odometer over leading axes
      if (++idx[d] < xs[d]) break;
      idx[d] = 0;
    }
  }
}

// ---- slice (ONNX): per sliced axis a start, a step and an element count ----
struct SliceAxis {
  int64_t start = 0, step = 1, count = 0;
};

std::vector<SliceAxis> slice_plan(const Attrs& a, const TensorType& x) {
  const auto& starts = a.ints("starts");
  const auto& ends = a.ints("ends");
  std::vector<int64_t> axes = a.ints("axes");
  std::vector<int64_t> steps = a.ints("steps");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw Error(fmt::format("slice: starts {}, ends {}, axes {}, steps {} differ in length",
                            shape_str(starts), shape_str(ends), shape_str(axes), shape_str(steps)));
  std::vector<SliceAxis> plan(x.shape.size());
  std::vector<bool> seen(x.shape.size(), false);
  for (size_t d = 0; d < plan.size(); ++d) plan[d].count = x.shape[d];
  for (size_t i = 0; i < starts.size(); ++i) {
    size_t ax = static_cast<size_t>(norm_axis("slice", axes[i], x.rank()));
    if (seen[ax]) throw Error(fmt::format("slice: axis {} given twice in {}", ax, shape_str(axes)));
    seen[ax] = true;
    int64_t dim = x.shape[ax], step = steps[i];
    if (step == 0) throw Error(fmt::format("slice: steps {} contain 0", shape_str(steps)));
    // A step longer than the axis reads one element, as does a step of the axis's length:
    // clamping it keeps the count and the kernel's offsets (step * stride) from overflowing.
    step = std::clamp<int64_t>(step, -std::max<int64_t>(dim, 1), std::max<int64_t>(dim, 1));
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    int64_t count;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > s ? 1 + (e - s - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count = s > e ? 1 + (s - e - 1) / -step : 0;
    }
    if (count == 0)
      throw Error(
          fmt::format("slice: axis {} of {} is empty after slicing (start {}, end {}, "
                      "step {})",
                      ax, shape_str(x.shape), starts[i], ends[i], step));
    plan[ax] = {s, step, count};
  }
  return plan;
}

std::vector<TensorType> infer_slice(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  auto plan = slice_plan(a, x);
  Shape s;
  for (auto& p : plan) s.push_back(p.count);
  TensorType out = derived_type(x, std::move(s));
  for (size_t d = 0; d < plan.size(); ++d)
    if (plan[d].step == 1)  // a contiguous range: the tree of that range, if it has one
      out.set_split(
          d, split_subtree(x.split(d), x.shape[d], plan[d].start, plan[d].start + plan[d].count));
  tidy_splits(out);
  return {out};
}

template <class T>
void kernel_slice(const KernelIO<T>& io) {
  auto plan = slice_plan(io.attrs, io.in_types[0]);
  auto st = strides_of(io.in_types[0].shape);
  size_t r = plan.size();
  int64_t src = 0;
  for (size_t d = 0; d < r; ++d) src += plan[d].start * st[d];
  std::vector<int64_t> idx(r, 0);
  int64_t n = io.out_types[0].numel();
  for (int64_t i = 0; i < n; ++i) {
    io.out[0][i] = io.in[0][src];
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {  // odometer over the output
      src += plan[d].step * st[d];
      if (++idx[d] < plan[d].count) break;
      src -= plan[d].step * st[d] * plan[d].count;
      idx[d] = 0;
    }
  }
}

}  // namespace

void register_reshape_ops(std::vector<OpDef>& defs) {
  defs.push_back(
      {.name = "reshape",
       .axiom_name = "merge_axes",
       .min_inputs = 1,
       .max_inputs = 1,
       .attrs = {required_attr("shape", AttrKind::Ints)},
       .infer = infer_reshape,
       .kernel_f32 = kernel_copy<float>,
       .kernel_u32 = kernel_copy<uint32_t>,
       .cost = free_cost,
       .axiom_params = {"axis"},
       .params_to_attrs = reshape_params_to_attrs,
       .attrs_to_params = reshape_attrs_to_params,
       .axiom_forms = {{.name = "split_axis", .num_tensors = 1, .params = {"axis", "heads"}}}});
  defs.push_back({.name = "flatten",
                  .min_inputs = 1,
                  .max_inputs = 1,
                  .attrs = {int_attr("axis", 1)},
                  .infer = infer_flatten,
                  .kernel_f32 = kernel_copy<float>,
                  .kernel_u32 = kernel_copy<uint32_t>,
                  .cost = free_cost});
  defs.push_back({.name = "pad",
                  .min_inputs = 1,
                  .max_inputs = 1,
                  .attrs = {required_attr("pads", AttrKind::Ints), float_attr("value", 0.0)},
                  .infer = infer_pad,
                  .kernel_f32 = kernel_pad<float>,
                  .kernel_u32 = kernel_pad<uint32_t>,
                  .cost = copy_cost});
  defs.push_back(
      {.name = "slice",
       .min_inputs = 1,
       .max_inputs = 1,
       .attrs = {required_attr("starts", AttrKind::Ints), required_attr("ends", AttrKind::Ints),
                 ints_attr("axes"), ints_attr("steps")},
       .infer = infer_slice,
       .kernel_f32 = kernel_slice<float>,
       .kernel_u32 = kernel_slice<uint32_t>,
       .cost = copy_cost});
}

}  // namespace graphsub
