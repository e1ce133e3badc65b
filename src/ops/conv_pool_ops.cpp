// Convolution and pooling: grouped 2-d conv (stride, explicit pads, dilations, optional bias,
// fused activation), enlarge (zero-pad a kernel to a larger size, centred), average and max
// pooling, and global average pooling; conv_add, a conv that adds a residual (formed by the
// optimizer only). Images are NCHW, kernels OIHW.
#include "ops/families.h"
#include "ops/kernel_util.h"
#include "ops/split_trees.h"
#include "ops/window.h"

namespace graphsub {
namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}
int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// Output positions o in [lo, hi) whose input index o*s + off lies in [0, n).
std::pair<int64_t, int64_t> valid_range(int64_t off, int64_t s, int64_t n, int64_t out) {
  // Clamped to `out`: with a kernel wider than the input, the first in-range output can lie
  // past the last output.
  int64_t lo = std::clamp<int64_t>(ceil_div(-off, s), 0, out);
  int64_t hi = std::min<int64_t>(out, floor_div(n - 1 - off, s) + 1);
  return {lo, std::max(lo, hi)};
}

// Pooled / convolved outputs keep the trees of the batch and channel axes of `x`.
void keep_batch_channel_splits(TensorType& out, const TensorType& x) {
  out.set_split(0, x.split(0));
  out.set_split(1, x.split(1));
  tidy_splits(out);
}

// ---- conv ----
std::vector<TensorType> infer_conv(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  const TensorType& w = in[1];
  require_rank("conv", "input", x, 4);
  require_rank("conv", "weight", w, 4);
  int64_t c = x.shape[1], cg = w.shape[1], o = w.shape[0];
  if (cg < 1) throw Error(fmt::format("conv: weight {} has no input channels", shape_str(w.shape)));
  if (c % cg != 0)
    throw Error(
        fmt::format("conv: input channels {} of {} are not a multiple of the weight's {} "
                    "of {}",
                    c, shape_str(x.shape), cg, shape_str(w.shape)));
  int64_t groups = c / cg;
  if (groups < 1) throw Error(fmt::format("conv: input {} has no channels", shape_str(x.shape)));
  if (o % groups != 0)
    throw Error(
        fmt::format("conv: output channels {} of weight {} are not a multiple of the {} "
                    "groups of input {}",
                    o, shape_str(w.shape), groups, shape_str(x.shape)));
  if (in.size() == 3 && in[2].shape != Shape{o})
    throw Error(fmt::format("conv: bias must be [{}], got {}", o, shape_str(in[2].shape)));
  auto win = Window2d::from_attrs("conv", a, w.shape[2], w.shape[3], true);
  TensorType out =
      derived_type(x, {x.shape[0], o, win.out_h("conv", x.shape), win.out_w("conv", x.shape)});
  out.set_split(0, x.split(0));
  out.set_split(1, w.split(0));
  tidy_splits(out);
  return {out};
}

// Gathers the input values that output rows [row0, row0 + rows) of one group read into
// col[r][p] (im2col): r runs over (input channel, ky, kx), p over the tile's output pixels;
// positions in the padding read zero.
template <class T>
void gather_columns(const T* xg, int64_t cg, int64_t h, int64_t w, int64_t ow_n,
                    const Window2d& win, int64_t row0, int64_t rows, T* col) {
  int64_t len = rows * ow_n;
  for (int64_t ci = 0; ci < cg; ++ci) {
    const T* plane = xg + ci * h * w;
    for (int64_t ky = 0; ky < win.kh; ++ky)
      for (int64_t kx = 0; kx < win.kw; ++kx) {
        T* dst = col + ((ci * win.kh + ky) * win.kw + kx) * len;
        int64_t off_w = kx * win.dw - win.pl;
        auto [ow_lo, ow_hi] = valid_range(off_w, win.sw, w, ow_n);
        for (int64_t r = 0; r < rows; ++r) {
          T* d = dst + r * ow_n;
          int64_t ih = (row0 + r) * win.sh + ky * win.dh - win.pt;
          if (ih < 0 || ih >= h) {
            std::fill(d, d + ow_n, T{});
            continue;
          }
          const T* src = plane + ih * w;
          std::fill(d, d + ow_lo, T{});
          for (int64_t ow = ow_lo; ow < ow_hi; ++ow) d[ow] = src[ow * win.sw + off_w];
          std::fill(d + ow_hi, d + ow_n, T{});
        }
      }
  }
}

// Convolution as a matrix product per group: out[o][p] = bias[o] + sum_r w[o][r] * col[r][p].
// col is built for a tile of output rows at a time so that it stays cache-sized; a 1x1
// unpadded stride-1 conv reads the input directly. Output channels go in blocks so that each
// col row is reused from cache. In uint32 the sum order does not matter (exact arithmetic).
template <class T>
void kernel_conv(const KernelIO<T>& io) {
  const Shape& xs = io.in_types[0].shape;
  const Shape& ws = io.in_types[1].shape;
  const Shape& os = io.out_types[0].shape;
  int64_t n_batch = xs[0], c = xs[1], h = xs[2], w = xs[3];
  int64_t o_ch = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
  int64_t oh_n = os[2], ow_n = os[3], plane = oh_n * ow_n;
  int64_t groups = c / cg, og = o_ch / groups, taps = cg * kh * kw;
  auto win = Window2d::from_attrs("conv", io.attrs, kh, kw, true);
  Act act = parse_act(io.attrs.s("act"));
  const T* bias = io.in.size() > 2 ? io.in[2] : nullptr;
  const T* weights = io.in[1];
  bool direct = kh == 1 && kw == 1 && win.sh == 1 && win.sw == 1 && win.pt == 0 && win.pl == 0 &&
                win.pb == 0 && win.pr == 0;
  constexpr int64_t kTileElems = int64_t{1} << 16;
  constexpr int64_t kOutBlock = 8;
  int64_t tile_rows =
      direct ? oh_n : std::clamp<int64_t>(kTileElems / std::max<int64_t>(1, taps * ow_n), 1, oh_n);
  std::vector<T> col(direct ? 0 : static_cast<size_t>(taps * tile_rows * ow_n));
  for (int64_t n = 0; n < n_batch; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      const T* xg = io.in[0] + (n * c + g * cg) * h * w;
      T* outg = io.out[0] + (n * o_ch + g * og) * plane;
      for (int64_t row0 = 0; row0 < oh_n; row0 += tile_rows) {
        int64_t rows = std::min(tile_rows, oh_n - row0), len = rows * ow_n, p0 = row0 * ow_n;
        const T* cols = xg + p0;
        int64_t col_stride = h * w;
        if (!direct) {
          gather_columns(xg, cg, h, w, ow_n, win, row0, rows, col.data());
          cols = col.data();
          col_stride = len;
        }
        for (int64_t ob = 0; ob < og; ob += kOutBlock) {
          int64_t oe = std::min(og, ob + kOutBlock);
          for (int64_t o = ob; o < oe; ++o)
            std::fill(outg + o * plane + p0, outg + o * plane + p0 + len,
                      bias ? bias[g * og + o] : T{});
          for (int64_t r = 0; r < taps; ++r) {
            const T* cr = cols + r * col_stride;
            for (int64_t o = ob; o < oe; ++o) {
              T wv = weights[(g * og + o) * taps + r];
              T* op = outg + o * plane + p0;
              for (int64_t i = 0; i < len; ++i) op[i] += wv * cr[i];
            }
          }
        }
      }
    }
  if (act != Act::None)
    for (int64_t i = 0, n = io.out_types[0].numel(); i < n; ++i)
      io.out[0][i] = apply_act(act, io.out[0][i]);
}

OpCost cost_conv(const Attrs& a, std::span<const TensorType> in, std::span<const TensorType> out) {
  OpCost cost = streaming_cost(in, out, 0);
  const Shape& ws = in[1].shape;
  double outputs = static_cast<double>(out[0].numel());
  cost.flops = 2 * static_cast<double>(ws[1] * ws[2] * ws[3]) * outputs;
  if (in.size() > 2) cost.flops += outputs;
  if (a.s("act") != "none") cost.flops += outputs;
  return cost;
}

Attrs conv_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType> in) {
  int64_t s = param_int("conv", p, 0);
  if (in.size() < 2 || in[1].rank() != 4)
    throw Error("conv: parameters need the weight's type to resolve the padding");
  return {
      {"stride", std::vector<int64_t>{s, s}},
      {"pads", pads_of_padding("conv", param_symbol("conv", p, 1), in[1].shape[2], in[1].shape[3])},
      {"act", param_symbol("conv", p, 2)}};
}

std::optional<std::vector<AxiomParam>> conv_attrs_to_params(const Attrs& a,
                                                            std::span<const TensorType> in) {
  if (in.size() > 2 || !act_in_axiom_language(a.s("act"))) return std::nullopt;  // bias
  auto& st = a.ints("stride");
  if (a.ints("dilations") != std::vector<int64_t>{1, 1} || st.size() != 2 || st[0] != st[1])
    return std::nullopt;
  auto padding = padding_of_pads(a.ints("pads"), in[1].shape[2], in[1].shape[3]);
  if (!padding) return std::nullopt;
  return std::vector<AxiomParam>{st[0], *padding, a.s("act")};
}

// ---- conv_add: act(conv(x, w [, b]) + y), a convolution that adds a residual ----
// Inputs x, w, y [, b]: the conv's operands with the residual y third, so that its bias stays
// optional. The activation applies after the addition (oneDNN's sum post-op, then eltwise).
// Each part below is conv's own, applied to the conv view of the operands.
template <class E>
std::vector<E> conv_operands(std::span<const E> in) {
  std::vector<E> v{in[0], in[1]};
  if (in.size() > 3) v.push_back(in[3]);
  return v;
}

Attrs without_act(const Attrs& a) {
  Attrs plain = a;
  plain.set("act", std::string("none"));
  return plain;
}

std::vector<TensorType> infer_conv_add(const Attrs& a, std::span<const TensorType> in) {
  auto out = infer_conv(a, conv_operands(in));
  if (in[2].shape != out[0].shape || in[2].dtype != out[0].dtype)
    throw Error(fmt::format("conv_add: residual {} must have the conv's output type {}",
                            in[2].str(), out[0].str()));
  return out;
}

template <class T>
void kernel_conv_add(const KernelIO<T>& io) {
  Attrs plain = without_act(io.attrs);
  auto types = conv_operands(io.in_types);
  auto ptrs = conv_operands(io.in);
  kernel_conv(KernelIO<T>{plain, types, io.out_types, ptrs, io.out});
  Act act = parse_act(io.attrs.s("act"));
  const T* y = io.in[2];
  for (int64_t i = 0, n = io.out_types[0].numel(); i < n; ++i)
    io.out[0][i] = apply_act(act, io.out[0][i] + y[i]);
}

OpCost cost_conv_add(const Attrs& a, std::span<const TensorType> in,
                     std::span<const TensorType> out) {
  OpCost cost = cost_conv(a, conv_operands(in), out);
  cost.bytes += static_cast<double>(in[2].numel() * dtype_size(in[2].dtype));
  cost.flops += static_cast<double>(out[0].numel());
  return cost;
}

// ---- enlarge: zero-pad a kernel [O,I,kh,kw] to [O,I,th,tw], centred ----
std::vector<TensorType> infer_enlarge(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& w = in[0];
  require_rank("enlarge", "weight", w, 4);
  auto& k = ints_of_size("enlarge", a, "kernel", 2, 1);
  for (int i = 0; i < 2; ++i) {
    int64_t have = w.shape[2 + i];
    if (k[i] < have || (k[i] - have) % 2 != 0)
      throw Error(
          fmt::format("enlarge: target kernel {} must be at least the size of weight {} "
                      "and differ from it by an even amount (centred)",
                      shape_str(k), shape_str(w.shape)));
  }
  TensorType out = derived_type(w, {w.shape[0], w.shape[1], k[0], k[1]});
  keep_batch_channel_splits(out, w);
  return {out};
}

template <class T>
void kernel_enlarge(const KernelIO<T>& io) {
  const Shape& ws = io.in_types[0].shape;
  const Shape& os = io.out_types[0].shape;
  int64_t kh = ws[2], kw = ws[3], th = os[2], tw = os[3];
  int64_t dy = (th - kh) / 2, dx = (tw - kw) / 2;
  std::fill(io.out[0], io.out[0] + io.out_types[0].numel(), T{});
  for (int64_t p = 0; p < ws[0] * ws[1]; ++p)
    for (int64_t y = 0; y < kh; ++y)
      for (int64_t x = 0; x < kw; ++x)
        io.out[0][(p * th + y + dy) * tw + x + dx] = io.in[0][(p * kh + y) * kw + x];
}

// ---- poolavg / poolmax ----
Window2d pool_window(const char* op, const Attrs& a) {
  auto& k = ints_of_size(op, a, "kernel", 2, 1);
  auto win = Window2d::from_attrs(op, a, k[0], k[1], false);
  // Every window must see at least one input element (ONNX requires pads < kernel too).
  if (win.pt >= win.kh || win.pb >= win.kh || win.pl >= win.kw || win.pr >= win.kw)
    throw Error(fmt::format("{}: pads {} must be smaller than the kernel {}", op,
                            shape_str(a.ints("pads")), shape_str(k)));
  return win;
}

template <const char* Op>
std::vector<TensorType> infer_pool(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  require_rank(Op, "input", x, 4);
  auto win = pool_window(Op, a);
  TensorType out =
      derived_type(x, {x.shape[0], x.shape[1], win.out_h(Op, x.shape), win.out_w(Op, x.shape)});
  keep_batch_channel_splits(out, x);
  return {out};
}

constexpr char kPoolAvg[] = "poolavg";
constexpr char kPoolMax[] = "poolmax";

// Runs `reduce(plane, out_index, y0, y1, x0, x1)` for each output of each plane, where
// [y0,y1) x [x0,x1) is the in-bounds part of the window.
template <class T, class F>
void for_each_window(const KernelIO<T>& io, const Window2d& win, F reduce) {
  const Shape& xs = io.in_types[0].shape;
  const Shape& os = io.out_types[0].shape;
  int64_t h = xs[2], w = xs[3], oh_n = os[2], ow_n = os[3];
  for (int64_t p = 0; p < xs[0] * xs[1]; ++p) {
    const T* plane = io.in[0] + p * h * w;
    T* out = io.out[0] + p * oh_n * ow_n;
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      int64_t y = oh * win.sh - win.pt;
      int64_t y0 = std::max<int64_t>(y, 0), y1 = std::min(y + win.kh, h);
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        int64_t x = ow * win.sw - win.pl;
        int64_t x0 = std::max<int64_t>(x, 0), x1 = std::min(x + win.kw, w);
        out[oh * ow_n + ow] = reduce(plane, y0, y1, x0, x1);
      }
    }
  }
}

template <class T>
void kernel_poolavg(const KernelIO<T>& io) {
  auto win = pool_window("poolavg", io.attrs);
  bool include_pad = io.attrs.i("count_include_pad") != 0;
  int64_t w = io.in_types[0].shape[3];
  T full = Scalar<T>::inverse(win.kh * win.kw);
  for_each_window(io, win, [&](const T* plane, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
    T sum{};
    for (int64_t y = y0; y < y1; ++y)
      for (int64_t x = x0; x < x1; ++x) sum += plane[y * w + x];
    // Multiplying by the (modular) inverse keeps conv(x, Cpool) == poolavg(x) exact in uint32.
    return sum * (include_pad ? full : Scalar<T>::inverse((y1 - y0) * (x1 - x0)));
  });
}

template <class T>
void kernel_poolmax(const KernelIO<T>& io) {
  auto win = pool_window("poolmax", io.attrs);
  int64_t w = io.in_types[0].shape[3];
  for_each_window(io, win, [&](const T* plane, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
    T m = Scalar<T>::lowest();
    for (int64_t y = y0; y < y1; ++y)
      for (int64_t x = x0; x < x1; ++x) m = Scalar<T>::max(m, plane[y * w + x]);
    return m;
  });
}

OpCost cost_pool(const Attrs& a, std::span<const TensorType> in, std::span<const TensorType> out) {
  auto& k = a.ints("kernel");
  return streaming_cost(in, out, static_cast<double>(k[0] * k[1]));
}

Attrs pool_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  int64_t k = param_int("pool", p, 0), s = param_int("pool", p, 1);
  return {{"kernel", std::vector<int64_t>{k, k}},
          {"stride", std::vector<int64_t>{s, s}},
          {"pads", pads_of_padding("pool", param_symbol("pool", p, 2), k, k)}};
}

std::optional<std::vector<AxiomParam>> pool_attrs_to_params(const Attrs& a,
                                                            std::span<const TensorType>) {
  auto& k = a.ints("kernel");
  auto& s = a.ints("stride");
  if (k.size() != 2 || s.size() != 2 || k[0] != k[1] || s[0] != s[1]) return std::nullopt;
  auto padding = padding_of_pads(a.ints("pads"), k[0], k[1]);
  if (!padding) return std::nullopt;
  // The axiom language's average pool counts padded positions.
  if (a.has("count_include_pad") && a.i("count_include_pad") == 0 &&
      a.ints("pads") != std::vector<int64_t>{0, 0, 0, 0})
    return std::nullopt;
  return std::vector<AxiomParam>{k[0], s[0], *padding};
}

// ---- global_avgpool: [N,C,H,W] -> [N,C,1,1] ----
std::vector<TensorType> infer_global_avgpool(const Attrs&, std::span<const TensorType> in) {
  require_rank("global_avgpool", "input", in[0], 4);
  TensorType out = derived_type(in[0], {in[0].shape[0], in[0].shape[1], 1, 1});
  keep_batch_channel_splits(out, in[0]);
  return {out};
}

template <class T>
void kernel_global_avgpool(const KernelIO<T>& io) {
  const Shape& xs = io.in_types[0].shape;
  int64_t hw = xs[2] * xs[3];
  T inv = Scalar<T>::inverse(hw);
  for (int64_t p = 0; p < xs[0] * xs[1]; ++p) {
    T sum{};
    const T* plane = io.in[0] + p * hw;
    for (int64_t i = 0; i < hw; ++i) sum += plane[i];
    io.out[0][p] = sum * inv;
  }
}

}  // namespace

void register_conv_pool_ops(std::vector<OpDef>& defs) {
  const AttrSpec stride = ints_attr("stride", {1, 1});
  const AttrSpec pads = ints_attr("pads", {0, 0, 0, 0});
  const std::vector<AttrSpec> conv_attrs = {stride, pads, ints_attr("dilations", {1, 1}),
                                            act_attr()};
  defs.push_back({.name = "conv",
                  .axiom_name = "conv",
                  .min_inputs = 2,
                  .max_inputs = 3,
                  .attrs = conv_attrs,
                  .infer = infer_conv,
                  .kernel_f32 = kernel_conv<float>,
                  .kernel_u32 = kernel_conv<uint32_t>,
                  .cost = cost_conv,
                  .axiom_params = {"stride", "padding", "act"},
                  .params_to_attrs = conv_params_to_attrs,
                  .attrs_to_params = conv_attrs_to_params});
  // Not in the axiom language: the optimizer's fuse-conv-add forms it, the generator never sees
  // it.
  defs.push_back({.name = "conv_add",
                  .min_inputs = 3,
                  .max_inputs = 4,
                  .attrs = conv_attrs,
                  .infer = infer_conv_add,
                  .kernel_f32 = kernel_conv_add<float>,
                  .kernel_u32 = kernel_conv_add<uint32_t>,
                  .cost = cost_conv_add});
  defs.push_back({.name = "enlarge",
                  .axiom_name = "enlarge",
                  .min_inputs = 1,
                  .max_inputs = 1,
                  .attrs = {required_attr("kernel", AttrKind::Ints)},
                  .infer = infer_enlarge,
                  .kernel_f32 = kernel_enlarge<float>,
                  .kernel_u32 = kernel_enlarge<uint32_t>,
                  .cost = copy_cost,
                  .axiom_params = {"kernel"},
                  .params_to_attrs = square_kernel_attrs,
                  .attrs_to_params = square_kernel_params});
  defs.push_back({.name = "poolavg",
                  .axiom_name = "poolavg",
                  .min_inputs = 1,
                  .max_inputs = 1,
                  .attrs = {required_attr("kernel", AttrKind::Ints), stride, pads,
                            int_attr("count_include_pad", 1)},
                  .infer = infer_pool<kPoolAvg>,
                  .kernel_f32 = kernel_poolavg<float>,
                  .kernel_u32 = kernel_poolavg<uint32_t>,
                  .cost = cost_pool,
                  .axiom_params = {"kernel", "stride", "padding"},
                  .params_to_attrs = pool_params_to_attrs,
                  .attrs_to_params = pool_attrs_to_params});
  defs.push_back({.name = "poolmax",
                  .axiom_name = "poolmax",
                  .min_inputs = 1,
                  .max_inputs = 1,
                  .attrs = {required_attr("kernel", AttrKind::Ints), stride, pads},
                  .infer = infer_pool<kPoolMax>,
                  .kernel_f32 = kernel_poolmax<float>,
                  .kernel_u32 = kernel_poolmax<uint32_t>,
                  .cost = cost_pool,
                  .axiom_params = {"kernel", "stride", "padding"},
                  .params_to_attrs = pool_params_to_attrs,
                  .attrs_to_params = pool_attrs_to_params});
  defs.push_back({.name = "global_avgpool",
                  .min_inputs = 1,
                  .max_inputs = 1,
                  .infer = infer_global_avgpool,
                  .kernel_f32 = kernel_global_avgpool<float>,
                  .kernel_u32 = kernel_global_avgpool<uint32_t>});
}

}  // namespace graphsub
