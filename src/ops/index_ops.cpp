// Operators that copy elements by index: expand (broadcast to a constant shape), gather
// (constant indices along one axis) and resize (nearest or bilinear on NCHW images, constant
// output size). Their constants are attributes, known at import. In the axiom language they
// take those constants as parameters: (expand ?t ?x) with the target shape spelled 2_4,
// (gather ?a ?i ?x) with one-dimensional indices spelled 1_0, and (resize ?g ?x) for nearest
// resizes with the geometry spelled as below.
#include <algorithm>
#include <cmath>

#include "ops/families.h"
#include "ops/int_list_param.h"
#include "ops/kernel_util.h"

namespace graphsub {
namespace {

// ---- expand: numpy broadcast of x to `shape` (ONNX Expand: the result may be larger) ----
std::vector<TensorType> infer_expand(const Attrs& a, std::span<const TensorType> in) {
  const auto& s = a.ints("shape");
  for (int64_t d : s)
    if (d < 0) throw Error(fmt::format("expand: negative dimension in {}", shape_str(s)));
  return {derived_type(in[0], broadcast_shapes("expand", in[0].shape, Shape(s.begin(), s.end())))};
}

template <class T>
void kernel_expand(const KernelIO<T>& io) {
  for_each_broadcast(io.out_types[0].shape, io.in_types[0].shape,
                     [&](int64_t i, int64_t j) { io.out[0][i] = io.in[0][j]; });
}

Attrs expand_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  return {{"shape", param_ints("expand", p[0])}};
}

std::optional<std::vector<AxiomParam>> expand_attrs_to_params(const Attrs& a,
                                                              std::span<const TensorType>) {
  auto t = ints_param(a.ints("shape"));
  if (!t) return std::nullopt;
  return std::vector<AxiomParam>{*t};
}

// ---- gather: x[..., indices, ...] along `axis`; indices (shape indices_shape) may be
// negative (counted from the end) ----
std::vector<TensorType> infer_gather(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  if (x.rank() == 0) throw Error("gather: the input must have rank 1 or more");
  auto axis = static_cast<size_t>(norm_axis("gather", a.i("axis"), x.rank()));
  const auto& idx = a.ints("indices");
  const auto& ishape = a.ints("indices_shape");
  for (int64_t d : ishape)
    if (d < 0) throw Error(fmt::format("gather: negative indices_shape {}", shape_str(ishape)));
  if (numel(Shape(ishape.begin(), ishape.end())) != static_cast<int64_t>(idx.size()))
    throw Error(
        fmt::format("gather: {} indices for indices_shape {}", idx.size(), shape_str(ishape)));
  int64_t dim = x.shape[axis];
  for (int64_t i : idx)
    if (i < -dim || i >= dim)
      throw Error(fmt::format("gather: index {} out of range for axis {} of {}", i, axis,
                              shape_str(x.shape)));
  Shape s(x.shape.begin(), x.shape.begin() + static_cast<int64_t>(axis));
  s.insert(s.end(), ishape.begin(), ishape.end());
  s.insert(s.end(), x.shape.begin() + static_cast<int64_t>(axis) + 1, x.shape.end());
  return {derived_type(x, std::move(s))};
}

template <class T>
void kernel_gather(const KernelIO<T>& io) {
  const Shape& xs = io.in_types[0].shape;
  auto axis = static_cast<size_t>(norm_axis("gather", io.attrs.i("axis"), io.in_types[0].rank()));
  const auto& idx = io.attrs.ints("indices");
  int64_t outer = numel(Shape(xs.begin(), xs.begin() + static_cast<int64_t>(axis)));
  int64_t inner = numel(Shape(xs.begin() + static_cast<int64_t>(axis) + 1, xs.end()));
  int64_t dim = xs[axis];
  T* y = io.out[0];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx) {
      const T* src = io.in[0] + (o * dim + (i < 0 ? i + dim : i)) * inner;
      y = std::copy(src, src + inner, y);
    }
}

// In the language the indices are one-dimensional (a scalar index, which drops the axis,
// stays outside).
Attrs gather_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  std::vector<int64_t> idx = param_ints("gather", p[1]);
  auto n = static_cast<int64_t>(idx.size());
  return {{"axis", param_int("gather", p, 0)},
          {"indices", std::move(idx)},
          {"indices_shape", std::vector<int64_t>{n}}};
}

std::optional<std::vector<AxiomParam>> gather_attrs_to_params(const Attrs& a,
                                                              std::span<const TensorType> in) {
  if (a.ints("indices_shape").size() != 1) return std::nullopt;
  auto i = ints_param(a.ints("indices"));
  if (!i) return std::nullopt;
  return std::vector<AxiomParam>{norm_axis("gather", a.i("axis"), in[0].rank()), *i};
}

// ---- resize: NCHW to `sizes` [H', W'], as ONNX Resize (opset 11+) defines it ----
const std::vector<std::string> kCoordModes = {"half_pixel", "pytorch_half_pixel", "asymmetric",
                                              "align_corners"};
const std::vector<std::string> kNearestModes = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                                "ceil"};

std::vector<TensorType> infer_resize(const Attrs& a, std::span<const TensorType> in) {
  require_rank("resize", "input", in[0], 4);
  const auto& s = ints_of_size("resize", a, "sizes", 2, 1);
  if (a.f("scale_h") <= 0 || a.f("scale_w") <= 0)
    throw Error(fmt::format("resize: scales must be positive, got {} and {}", a.f("scale_h"),
                            a.f("scale_w")));
  const Shape& xs = in[0].shape;
  return {derived_type(in[0], {xs[0], xs[1], s[0], s[1]})};
}

// The input coordinate of output coordinate `o` along an axis of `in` -> `out` elements.
double source_coord(const std::string& mode, int64_t o, int64_t in, int64_t out, double scale) {
  if (mode == "asymmetric") return static_cast<double>(o) / scale;
  if (mode == "align_corners")
    return out == 1 ? 0.0
                    : static_cast<double>(o) * static_cast<double>(in - 1) /
                          static_cast<double>(out - 1);
  if (mode == "pytorch_half_pixel" && out == 1) return 0.0;
  return (static_cast<double>(o) + 0.5) / scale - 0.5;  // half_pixel, pytorch_half_pixel
}

int64_t nearest_index(const std::string& mode, double c, int64_t in) {
  double i = mode == "floor"  ? std::floor(c)
             : mode == "ceil" ? std::ceil(c)
             : c - std::floor(c) == 0.5
                 ? (mode == "round_prefer_floor" ? std::floor(c) : std::ceil(c))
                 : std::round(c);
  return std::clamp<int64_t>(static_cast<int64_t>(i), 0, in - 1);
}

// For one axis: each output position's two source indices and the weight of the second.
struct Taps {
  std::vector<int64_t> lo, hi;
  std::vector<double> w;
};

Taps taps(const Attrs& a, int64_t in, int64_t out, double scale) {
  Taps t;
  const std::string& coord = a.s("coordinate_transformation_mode");
  bool linear = a.s("mode") == "linear";
  for (int64_t o = 0; o < out; ++o) {
    double c = source_coord(coord, o, in, out, scale);
    if (!linear) {
      int64_t i = nearest_index(a.s("nearest_mode"), c, in);
      t.lo.push_back(i);
      t.hi.push_back(i);
      t.w.push_back(0);
      continue;
    }
    c = std::clamp(c, 0.0, static_cast<double>(in - 1));
    auto i = static_cast<int64_t>(std::floor(c));
    t.lo.push_back(i);
    t.hi.push_back(std::min(i + 1, in - 1));
    t.w.push_back(c - static_cast<double>(i));
  }
  return t;
}

template <class T>
void kernel_resize(const KernelIO<T>& io) {
  const Shape& xs = io.in_types[0].shape;
  const Shape& os = io.out_types[0].shape;
  Taps ty = taps(io.attrs, xs[2], os[2], io.attrs.f("scale_h"));
  Taps tx = taps(io.attrs, xs[3], os[3], io.attrs.f("scale_w"));
  int64_t planes = xs[0] * xs[1];
  T* y = io.out[0];
  for (int64_t p = 0; p < planes; ++p) {
    const T* x = io.in[0] + p * xs[2] * xs[3];
    for (int64_t i = 0; i < os[2]; ++i)
      for (int64_t j = 0; j < os[3]; ++j) {
        auto at = [&](int64_t r, int64_t c) { return x[r * xs[3] + c]; };
        if constexpr (std::is_same_v<T, float>) {
          auto wy = static_cast<float>(ty.w[i]), wx = static_cast<float>(tx.w[j]);
          float top = at(ty.lo[i], tx.lo[j]) * (1 - wx) + at(ty.lo[i], tx.hi[j]) * wx;
          float bottom = at(ty.hi[i], tx.lo[j]) * (1 - wx) + at(ty.hi[i], tx.hi[j]) * wx;
          *y++ = top * (1 - wy) + bottom * wy;
        } else if (io.attrs.s("mode") == "nearest") {  // a copy: exact in any ring
          *y++ = at(ty.lo[i], tx.lo[j]);
        } else {  // a deterministic stand-in mixing the four taps
          *y++ = at(ty.lo[i], tx.lo[j]) + 3u * at(ty.lo[i], tx.hi[j]) +
                 5u * at(ty.hi[i], tx.lo[j]) + 7u * at(ty.hi[i], tx.hi[j]);
        }
      }
  }
}

// In the language only nearest resizes appear (a linear one mixes neighbours, so it does
// not commute with non-linear operators); its one parameter spells the geometry as
// H'-W'-scale_h-scale_w-coordinate_transformation_mode-nearest_mode, e.g.
// 4-4-2-2-asymmetric-floor ('-' because the mode names contain '_').
Attrs resize_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  const auto* s = std::get_if<std::string>(&p[0]);
  std::vector<std::string> f;
  for (size_t start = 0; s;) {
    size_t end = std::min(s->find('-', start), s->size());
    f.push_back(s->substr(start, end - start));
    if (end == s->size()) break;
    start = end + 1;
  }
  auto number = [&](const std::string& t) {
    char* end = nullptr;
    double v = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != 0) throw Error(fmt::format("resize: '{}' is not a number", t));
    return v;
  };
  if (f.size() != 6)
    throw Error(fmt::format("resize: parameter '{}' is not H-W-scale_h-scale_w-coordinate-nearest",
                            s ? *s : fmt::format("{}", std::get<int64_t>(p[0]))));
  return {{"mode", std::string("nearest")},
          {"coordinate_transformation_mode", f[4]},
          {"nearest_mode", f[5]},
          {"sizes", std::vector<int64_t>{static_cast<int64_t>(number(f[0])),
                                         static_cast<int64_t>(number(f[1]))}},
          {"scale_h", number(f[2])},
          {"scale_w", number(f[3])}};
}

std::optional<std::vector<AxiomParam>> resize_attrs_to_params(const Attrs& a,
                                                              std::span<const TensorType>) {
  if (a.s("mode") != "nearest") return std::nullopt;
  const auto& sz = a.ints("sizes");
  std::string g = fmt::format("{}-{}-{}-{}-{}-{}", sz[0], sz[1], a.f("scale_h"), a.f("scale_w"),
                              a.s("coordinate_transformation_mode"), a.s("nearest_mode"));
  // A scale spelled with an exponent (1e-05) would add a '-': such a resize stays outside.
  if (std::count(g.begin(), g.end(), '-') != 5) return std::nullopt;
  return std::vector<AxiomParam>{g};
}

AttrSpec choice_attr(const char* name, const std::vector<std::string>& choices) {
  AttrSpec s = required_attr(name, AttrKind::String);
  s.default_value.emplace(std::in_place_index<2>, choices[0]);
  s.choices = choices;
  return s;
}

}  // namespace

void register_index_ops(std::vector<OpDef>& defs) {
  defs.push_back({.name = "expand",
                  .axiom_name = "expand",
                  .min_inputs = 1,
                  .max_inputs = 1,
                  .attrs = {required_attr("shape", AttrKind::Ints)},
                  .infer = infer_expand,
                  .kernel_f32 = kernel_expand<float>,
                  .kernel_u32 = kernel_expand<uint32_t>,
                  .cost = copy_cost,
                  .axiom_params = {"target"},
                  .params_to_attrs = expand_params_to_attrs,
                  .attrs_to_params = expand_attrs_to_params});
  defs.push_back({.name = "gather",
                  .axiom_name = "gather",
                  .min_inputs = 1,
                  .max_inputs = 1,
                  .attrs = {int_attr("axis", 0), required_attr("indices", AttrKind::Ints),
                            ints_attr("indices_shape")},
                  .infer = infer_gather,
                  .kernel_f32 = kernel_gather<float>,
                  .kernel_u32 = kernel_gather<uint32_t>,
                  .cost = copy_cost,
                  .axiom_params = {"axis", "indices"},
                  .params_to_attrs = gather_params_to_attrs,
                  .attrs_to_params = gather_attrs_to_params});
  defs.push_back(
      {.name = "resize",
       .axiom_name = "resize",
       .min_inputs = 1,
       .max_inputs = 1,
       .attrs = {choice_attr("mode", {"nearest", "linear"}),
                 choice_attr("coordinate_transformation_mode", kCoordModes),
                 choice_attr("nearest_mode", kNearestModes), required_attr("sizes", AttrKind::Ints),
                 required_attr("scale_h", AttrKind::Float),
                 required_attr("scale_w", AttrKind::Float)},
       .infer = infer_resize,
       .kernel_f32 = kernel_resize<float>,
       .kernel_u32 = kernel_resize<uint32_t>,
       // Not a stand-in where it counts: the language holds nearest resizes only, whose uint32
       // kernel copies exactly; the linear mode's uint32 mix never meets a rule.
       .axiom_params = {"geometry"},
       .params_to_attrs = resize_params_to_attrs,
       .attrs_to_params = resize_attrs_to_params});
}

}  // namespace graphsub
