// Normalisations and reductions: batchnorm (inference form), softmax, layernorm (over the
// trailing axes from `axis`), reduce_mean and reduce_sum. Written over T like every kernel: for
// uint32 the exp/sqrt stand-ins and modular division make them exact, deterministic fingerprints.
#include "ops/families.h"
#include "ops/float_params.h"
#include "ops/kernel_util.h"
#include "ops/split_trees.h"

namespace graphsub {
namespace {

AttrSpec epsilon_attr() {
  return float_attr("epsilon", 1e-5);
}

// Keeps x's trees on every axis except those in [from, to).
TensorType keep_splits_outside(const TensorType& x, size_t from, size_t to) {
  TensorType out = x;
  out.layout = Layout::Default;
  for (size_t a = from; a < to && a < out.splits.size(); ++a) out.splits[a] = nullptr;
  tidy_splits(out);
  return out;
}

// ---- batchnorm: y = (x - mean) * scale / sqrt(var + eps) + bias, per channel (axis 1) ----
std::vector<TensorType> infer_batchnorm(const Attrs&, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  if (x.rank() < 2)
    throw Error(
        fmt::format("batchnorm: input must have rank >= 2 (N,C,...), got {}", shape_str(x.shape)));
  static const char* names[] = {"scale", "bias", "mean", "var"};
  for (size_t i = 1; i < 5; ++i)
    if (in[i].shape != Shape{x.shape[1]})
      throw Error(fmt::format("batchnorm: {} must be [{}] for input {}, got {}", names[i - 1],
                              x.shape[1], shape_str(x.shape), shape_str(in[i].shape)));
  return {keep_splits_outside(x, 0, 0)};
}

template <class T>
void kernel_batchnorm(const KernelIO<T>& io) {
  const Shape& xs = io.in_types[0].shape;
  int64_t c_n = xs[1], inner = numel(Shape(xs.begin() + 2, xs.end()));
  T eps = Scalar<T>::from_double(io.attrs.f("epsilon"));
  const T *scale = io.in[1], *bias = io.in[2], *mean = io.in[3], *var = io.in[4];
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t c = 0; c < c_n; ++c) {
      T mul = Scalar<T>::div(scale[c], Scalar<T>::sqrt(var[c] + eps));
      const T* x = io.in[0] + (n * c_n + c) * inner;
      T* y = io.out[0] + (n * c_n + c) * inner;
      for (int64_t i = 0; i < inner; ++i) y[i] = (x[i] - mean[c]) * mul + bias[c];
    }
}

// ---- softmax along one axis ----
std::vector<TensorType> infer_softmax(const Attrs& a, std::span<const TensorType> in) {
  size_t axis = static_cast<size_t>(norm_axis("softmax", a.i("axis"), in[0].rank()));
  return {keep_splits_outside(in[0], axis, axis + 1)};
}

template <class T>
void kernel_softmax(const KernelIO<T>& io) {
  const Shape& xs = io.in_types[0].shape;
  if (numel(xs) == 0) return;  // nothing to normalise (and no row length to divide by)
  int64_t axis = norm_axis("softmax", io.attrs.i("axis"), static_cast<int64_t>(xs.size()));
  int64_t len = xs[static_cast<size_t>(axis)];
  int64_t inner = numel(Shape(xs.begin() + axis + 1, xs.end()));
  int64_t outer = numel(xs) / (len * inner);
  std::vector<T> sums(static_cast<size_t>(inner)), maxes(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    const T* x = io.in[0] + o * len * inner;
    T* y = io.out[0] + o * len * inner;
    // Rows of `inner` contiguous values: subtract the max for stability, exponentiate, divide.
    std::fill(maxes.begin(), maxes.end(), Scalar<T>::lowest());
    for (int64_t l = 0; l < len; ++l)
      for (int64_t i = 0; i < inner; ++i) maxes[i] = Scalar<T>::max(maxes[i], x[l * inner + i]);
    std::fill(sums.begin(), sums.end(), T{});
    for (int64_t l = 0; l < len; ++l)
      for (int64_t i = 0; i < inner; ++i) {
        T e = Scalar<T>::exp(x[l * inner + i] - maxes[i]);
        y[l * inner + i] = e;
        sums[i] += e;
      }
    for (int64_t l = 0; l < len; ++l)
      for (int64_t i = 0; i < inner; ++i)
        y[l * inner + i] = Scalar<T>::div(y[l * inner + i], sums[i]);
  }
}

// The language's softmax normalizes the last axis.
std::optional<std::vector<AxiomParam>> last_axis_params(const Attrs& a,
                                                        std::span<const TensorType> in) {
  int64_t axis = a.i("axis"), rank = in[0].rank();
  if (axis != -1 && axis != rank - 1) return std::nullopt;
  return std::vector<AxiomParam>{};
}

// ---- layernorm over the axes [axis, rank): scale (and bias) have that trailing shape ----
std::vector<TensorType> infer_layernorm(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  size_t axis = static_cast<size_t>(norm_axis("layernorm", a.i("axis"), x.rank()));
  Shape norm_shape(x.shape.begin() + static_cast<int64_t>(axis), x.shape.end());
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].shape != norm_shape)
      throw Error(fmt::format("layernorm: {} must be {} (the axes from {} of {}), got {}",
                              i == 1 ? "scale" : "bias", shape_str(norm_shape), axis,
                              shape_str(x.shape), shape_str(in[i].shape)));
  return {keep_splits_outside(x, axis, x.shape.size())};
}

template <class T>
void kernel_layernorm(const KernelIO<T>& io) {
  const Shape& xs = io.in_types[0].shape;
  if (numel(xs) == 0) return;  // nothing to normalise (and no row length to divide by)
  int64_t axis = norm_axis("layernorm", io.attrs.i("axis"), static_cast<int64_t>(xs.size()));
  int64_t len = numel(Shape(xs.begin() + axis, xs.end()));
  int64_t rows = numel(xs) / len;
  T inv_len = Scalar<T>::inverse(len);
  T eps = Scalar<T>::from_double(io.attrs.f("epsilon"));
  const T* scale = io.in[1];
  const T* bias = io.in.size() > 2 ? io.in[2] : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = io.in[0] + r * len;
    T* y = io.out[0] + r * len;
    T sum{};
    for (int64_t i = 0; i < len; ++i) sum += x[i];
    T mean = sum * inv_len;
    T sq{};
    for (int64_t i = 0; i < len; ++i) sq += (x[i] - mean) * (x[i] - mean);
    T inv_std = Scalar<T>::div(Scalar<T>::from_int(1), Scalar<T>::sqrt(sq * inv_len + eps));
    for (int64_t i = 0; i < len; ++i)
      y[i] = (x[i] - mean) * inv_std * scale[i] + (bias ? bias[i] : T{});
  }
}

// ---- rms_norm over the axes [axis, rank): x / sqrt(mean(x^2) + eps) * scale (ONNX's
// RMSNormalization, opset 23, in the order of its function body) ----
std::vector<TensorType> infer_rms_norm(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  size_t axis = static_cast<size_t>(norm_axis("rms_norm", a.i("axis"), x.rank()));
  Shape norm_shape(x.shape.begin() + static_cast<int64_t>(axis), x.shape.end());
  if (in[1].shape != norm_shape)
    throw Error(fmt::format("rms_norm: scale must be {} (the axes from {} of {}), got {}",
                            shape_str(norm_shape), axis, shape_str(x.shape),
                            shape_str(in[1].shape)));
  return {keep_splits_outside(x, axis, x.shape.size())};
}

template <class T>
void kernel_rms_norm(const KernelIO<T>& io) {
  const Shape& xs = io.in_types[0].shape;
  if (numel(xs) == 0) return;
  int64_t axis = norm_axis("rms_norm", io.attrs.i("axis"), static_cast<int64_t>(xs.size()));
  int64_t len = numel(Shape(xs.begin() + axis, xs.end()));
  int64_t rows = numel(xs) / len;
  T inv_len = Scalar<T>::mean_factor(len);
  T eps = Scalar<T>::from_double(io.attrs.f("epsilon"));
  const T* scale = io.in[1];
  for (int64_t r = 0; r < rows; ++r) {
    const T* x = io.in[0] + r * len;
    T* y = io.out[0] + r * len;
    T sq{};
    for (int64_t i = 0; i < len; ++i) sq += x[i] * x[i];
    T inv_rms = Scalar<T>::div(Scalar<T>::from_int(1), Scalar<T>::sqrt(sq * inv_len + eps));
    for (int64_t i = 0; i < len; ++i) y[i] = x[i] * inv_rms * scale[i];
  }
}

// ---- reduce_mean / reduce_sum over `axes` (empty: all axes) ----
std::vector<bool> reduced_axes(const Attrs& a, const TensorType& x) {
  std::vector<bool> red(x.shape.size(), a.ints("axes").empty());
  for (int64_t ax : a.ints("axes")) {
    size_t d = static_cast<size_t>(norm_axis("reduce", ax, x.rank()));
    if (red[d])
      throw Error(fmt::format("reduce: axis {} given twice in {}", d, shape_str(a.ints("axes"))));
    red[d] = true;
  }
  return red;
}

std::vector<TensorType> infer_reduce(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  auto red = reduced_axes(a, x);
  bool keep = a.i("keepdims") != 0;
  Shape s;
  std::vector<SplitTreePtr> trees;
  for (size_t d = 0; d < red.size(); ++d) {
    if (red[d] && !keep) continue;
    s.push_back(red[d] ? 1 : x.shape[d]);
    trees.push_back(red[d] ? nullptr : x.split(d));
  }
  TensorType out = derived_type(x, std::move(s));
  for (size_t d = 0; d < trees.size(); ++d) out.set_split(d, trees[d]);
  tidy_splits(out);
  return {out};
}

template <bool Mean, class T>
void kernel_reduce(const KernelIO<T>& io) {
  const Shape& xs = io.in_types[0].shape;
  auto red = reduced_axes(io.attrs, io.in_types[0]);
  size_t r = xs.size();
  // Stride of each input axis in the output (0 on reduced axes): an odometer over the input
  // accumulates every element into its output slot.
  Shape kept;
  for (size_t d = 0; d < r; ++d) kept.push_back(red[d] ? 1 : xs[d]);
  auto kst = strides_of(kept);
  std::vector<int64_t> ost(r);
  for (size_t d = 0; d < r; ++d) ost[d] = red[d] ? 0 : kst[d];
  int64_t n_out = io.out_types[0].numel();
  if (n_out == 0) return;  // an empty result (the mean of an empty input is NaN: 0 * 1/0)
  std::fill(io.out[0], io.out[0] + n_out, T{});
  std::vector<int64_t> idx(r, 0);
  int64_t n = numel(xs), dst = 0;
  for (int64_t i = 0; i < n; ++i) {
    io.out[0][dst] += io.in[0][i];
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {
      dst += ost[d];
      if (++idx[d] < xs[d]) break;
      dst -= ost[d] * xs[d];
      idx[d] = 0;
    }
  }
  if (!Mean) return;
  T inv = Scalar<T>::mean_factor(n / n_out);
  for (int64_t i = 0; i < n_out; ++i) io.out[0][i] *= inv;
}

// In the axiom language a reduction takes one axis and keeps it: (reduce_sum ?a ?x) is
// ReduceSum(axes=[a], keepdims=1), the form whose results still meet their inputs in
// element-wise operators. Other reductions stay outside the language.
Attrs reduce_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  Attrs a;
  a.set("axes", std::vector<int64_t>{param_int("reduce", p, 0)});
  a.set("keepdims", int64_t{1});
  return a;
}

std::optional<std::vector<AxiomParam>> reduce_attrs_to_params(const Attrs& a,
                                                              std::span<const TensorType> in) {
  if (a.ints("axes").size() != 1 || a.i("keepdims") != 1) return std::nullopt;
  return std::vector<AxiomParam>{norm_axis("reduce", a.ints("axes")[0], in[0].rank())};
}

OpCost cost_per_input(double per_elem, std::span<const TensorType> in,
                      std::span<const TensorType> out) {
  OpCost c = streaming_cost(in, out, 0);
  c.flops = per_elem * static_cast<double>(in[0].numel());
  return c;
}

}  // namespace

void register_norm_ops(std::vector<OpDef>& defs) {
  defs.push_back(
      {.name = "batchnorm",
       .min_inputs = 5,
       .max_inputs = 5,
       .attrs = {epsilon_attr()},
       .infer = infer_batchnorm,
       .kernel_f32 = kernel_batchnorm<float>,
       .kernel_u32 = kernel_batchnorm<uint32_t>,
       .cost = [](const Attrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
         return cost_per_input(2, in, out);
       }});
  // In the axiom language softmax is over the last axis, (softmax ?x): attention's axiom is
  // its composition. A softmax over another axis lies outside the language.
  defs.push_back(
      {.name = "softmax",
       .axiom_name = "softmax",
       .min_inputs = 1,
       .max_inputs = 1,
       .attrs = {int_attr("axis", -1)},
       .infer = infer_softmax,
       .kernel_f32 = kernel_softmax<float>,
       .kernel_u32 = kernel_softmax<uint32_t>,
       .cost = [](const Attrs&, std::span<const TensorType> in,
                  std::span<const TensorType> out) { return cost_per_input(5, in, out); },
       .standin = true,
       .attrs_to_params = last_axis_params});
  // In the axiom language both normalize over the last axis, with epsilon as the one
  // parameter: (layernorm ?eps ?x ?scale), (layernorm_b ?eps ?x ?scale ?bias) with the
  // optional bias, and (rms_norm ?eps ?x ?scale).
  defs.push_back(
      {.name = "layernorm",
       .axiom_name = "layernorm",
       .min_inputs = 2,
       .max_inputs = 3,
       .attrs = {int_attr("axis", -1), epsilon_attr()},
       .infer = infer_layernorm,
       .kernel_f32 = kernel_layernorm<float>,
       .kernel_u32 = kernel_layernorm<uint32_t>,
       .cost = [](const Attrs&, std::span<const TensorType> in,
                  std::span<const TensorType> out) { return cost_per_input(8, in, out); },
       .standin = true,
       .axiom_params = {"eps"},
       .params_to_attrs = epsilon_params_to_attrs,
       .attrs_to_params = last_axis_epsilon_params,
       .axiom_forms = {{"layernorm_b", 3}}});
  defs.push_back(
      {.name = "rms_norm",
       .axiom_name = "rms_norm",
       .min_inputs = 2,
       .max_inputs = 2,
       .attrs = {int_attr("axis", -1), epsilon_attr(), int_attr("stash_type", 1)},
       .infer = infer_rms_norm,
       .kernel_f32 = kernel_rms_norm<float>,
       .kernel_u32 = kernel_rms_norm<uint32_t>,
       .cost = [](const Attrs&, std::span<const TensorType> in,
                  std::span<const TensorType> out) { return cost_per_input(5, in, out); },
       .standin = true,
       .axiom_params = {"eps"},
       .params_to_attrs = epsilon_params_to_attrs,
       .attrs_to_params = last_axis_epsilon_params});
  for (bool mean : {true, false})
    defs.push_back(
        {.name = mean ? "reduce_mean" : "reduce_sum",
         .axiom_name = mean ? "reduce_mean" : "reduce_sum",
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {ints_attr("axes"), int_attr("keepdims", 1)},
         .infer = infer_reduce,
         .kernel_f32 = mean ? kernel_reduce<true, float> : kernel_reduce<false, float>,
         .kernel_u32 = mean ? kernel_reduce<true, uint32_t> : kernel_reduce<false, uint32_t>,
         .cost = [](const Attrs&, std::span<const TensorType> in,
                    std::span<const TensorType> out) { return cost_per_input(1, in, out); },
         .axiom_params = {"axis"},
         .params_to_attrs = reduce_params_to_attrs,
         .attrs_to_params = reduce_attrs_to_params});
}

}  // namespace graphsub
