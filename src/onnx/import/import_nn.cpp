// Converters for convolution, pooling, normalisation, reductions and indexing (Expand,
// Gather, Resize with constant parameters).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "onnx/import/import_context.h"

namespace graphsub {
namespace {

using onnx::NodeProto;

// Window attributes (kernel, strides, dilations, pads) are bounded so that the output-size
// arithmetic below cannot overflow for any input shape graphsub holds (dims <= 2^60); no
// real model comes near 2^31.
constexpr int64_t kMaxWindowAttr = int64_t{1} << 31;

void check_window_values(const NodeProto& n, const char* name, const std::vector<int64_t>& v,
                         int64_t min) {
  for (int64_t x : v)
    if (x < min || x > kMaxWindowAttr)
      throw Error(fmt::format("{}: attribute '{}' is {}; each value must be in [{}, 2^31]",
                              ImportContext::label(n), name, shape_str(v), min));
}

// A 2-value window attribute (strides, dilations), each value at least 1.
std::vector<int64_t> two(const NodeProto& n, const NodeAttrs& at, const char* name, int64_t def) {
  auto v = at.ints(name, {def, def});
  if (v.size() != 2)
    throw Error(fmt::format("{}: attribute '{}' must have 2 values for a 2-d operator, got {}",
                            ImportContext::label(n), name, shape_str(v)));
  check_window_values(n, name, v, 1);
  return v;
}

// Explicit pads [top,left,bottom,right] from `pads` or `auto_pad` (SAME_UPPER puts the odd
// pixel at the end, SAME_LOWER at the beginning).
std::vector<int64_t> window_pads(const NodeProto& n, const NodeAttrs& at, const Shape& x,
                                 const std::vector<int64_t>& kernel,
                                 const std::vector<int64_t>& stride,
                                 const std::vector<int64_t>& dil) {
  std::string auto_pad = at.s("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    auto p = at.ints("pads", {0, 0, 0, 0});
    if (p.size() != 4)
      throw Error(fmt::format("{}: pads must have 4 values for a 2-d operator, got {}",
                              ImportContext::label(n), shape_str(p)));
    check_window_values(n, "pads", p, 0);
    return p;
  }
  if (auto_pad == "VALID") return {0, 0, 0, 0};
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    throw Error(fmt::format("{}: unknown auto_pad '{}'", ImportContext::label(n), auto_pad));
  std::vector<int64_t> p(4);
  for (int i = 0; i < 2; ++i) {
    int64_t in = x[2 + i], out = (in + stride[i] - 1) / stride[i];
    int64_t total = std::max<int64_t>(0, (out - 1) * stride[i] + (kernel[i] - 1) * dil[i] + 1 - in);
    int64_t small = total / 2, big = total - small;
    p[i] = auto_pad == "SAME_UPPER" ? small : big;
    p[2 + i] = auto_pad == "SAME_UPPER" ? big : small;
  }
  return p;
}

TensorRef image(ImportContext& c, const NodeProto& n, int i) {
  TensorRef x = c.data(n, i);
  if (c.shape(x).size() != 4)
    throw Decline{
        fmt::format("input of rank {} (graphsub has 2-d windows on NCHW only)", c.shape(x).size())};
  return x;
}

std::vector<TensorRef> conv(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  TensorRef x = image(c, n, 0), w = c.data(n, 1);
  const Shape &xs = c.shape(x), &ws = c.shape(w);
  if (ws.size() != 4)
    throw Error(fmt::format("{}: weight must be 4-d for a 2-d input, got {}",
                            ImportContext::label(n), shape_str(ws)));
  int64_t group = at.i("group", 1);
  if (group < 1 || checked_mul(ws[1], group) != xs[1])
    throw Error(fmt::format("{}: group {} with weight {} does not match input {} ({} channels)",
                            ImportContext::label(n), group, shape_str(ws), shape_str(xs), xs[1]));
  std::vector<int64_t> kernel{ws[2], ws[3]};
  check_window_values(n, "kernel_shape (the weight's last two dimensions)", kernel, 1);
  if (at.has("kernel_shape") && at.ints("kernel_shape", {}) != kernel)
    throw Error(fmt::format("{}: kernel_shape {} differs from the weight's {}",
                            ImportContext::label(n), shape_str(at.ints("kernel_shape", {})),
                            shape_str(ws)));
  auto stride = two(n, at, "strides", 1), dil = two(n, at, "dilations", 1);
  Attrs a{{"stride", stride},
          {"pads", window_pads(n, at, xs, kernel, stride, dil)},
          {"dilations", dil}};
  std::vector<TensorRef> in{x, w};
  if (c.has_input(n, 2)) in.push_back(c.data(n, 2));
  return {c.op(n, "conv", std::move(in), std::move(a))};
}

// Floor-mode output size of a window.
int64_t floor_out(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1) {
  return (in + p0 + p1 - k) / s + 1;
}

template <bool Max>
std::vector<TensorRef> pool(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  TensorRef x = image(c, n, 0);
  const Shape& xs = c.shape(x);
  if (n.output_size() > 1 && !n.output(1).empty())
    throw Decline{"MaxPool's Indices output is used"};
  auto kernel = at.ints("kernel_shape", {});
  if (kernel.size() != 2)
    throw Error(fmt::format("{}: kernel_shape must have 2 values, got {}", ImportContext::label(n),
                            shape_str(kernel)));
  check_window_values(n, "kernel_shape", kernel, 1);
  auto stride = two(n, at, "strides", 1);
  if (two(n, at, "dilations", 1) != std::vector<int64_t>{1, 1}) throw Decline{"dilated pooling"};
  auto pads = window_pads(n, at, xs, kernel, stride, {1, 1});
  if (at.i("ceil_mode", 0)) {
    // Ceil mode only adds windows at the end; extra end padding gives the same windows
    // (max ignores padding, and so does an average that does not count it).
    auto inferred = c.inferred_shape(n, 0);
    for (int i = 0; i < 2; ++i) {
      int64_t in = xs[2 + i], span = in + pads[i] + pads[2 + i] - kernel[i];
      int64_t want = (span + stride[i] - 1) / stride[i] + 1;
      // ONNX's count, when known (it may come from the file's value_info: bounded here so
      // that the arithmetic below stays in range).
      if (inferred && inferred->size() == 4 && (*inferred)[2 + i] >= 1 &&
          (*inferred)[2 + i] <= want + 1)
        want = (*inferred)[2 + i];
      int64_t have = floor_out(in, kernel[i], stride[i], pads[i], pads[2 + i]);
      if (want == have) continue;
      if (!Max && at.i("count_include_pad", 0)) throw Decline{"ceil_mode with count_include_pad"};
      int64_t extra = (want - 1) * stride[i] + kernel[i] - (in + pads[i] + pads[2 + i]);
      if ((want - 1) * stride[i] - pads[i] >= in || pads[2 + i] + extra >= kernel[i])
        throw Decline{"ceil_mode window lying in the padding"};
      pads[2 + i] += extra;
    }
  }
  Attrs a{{"kernel", kernel}, {"stride", stride}, {"pads", pads}};
  if (!Max) a.set("count_include_pad", at.i("count_include_pad", 0));
  if (Max && at.i("storage_order", 0) != 0 && n.output_size() > 1) throw Decline{"storage_order"};
  return {c.op(n, Max ? "poolmax" : "poolavg", {x}, std::move(a))};
}

std::vector<TensorRef> global_avgpool(ImportContext& c, const NodeProto& n) {
  return {c.op(n, "global_avgpool", {image(c, n, 0)})};
}

std::vector<TensorRef> global_maxpool(ImportContext& c, const NodeProto& n) {
  TensorRef x = image(c, n, 0);
  const Shape& xs = c.shape(x);
  return {c.op(n, "poolmax", {x},
               {{"kernel", std::vector<int64_t>{xs[2], xs[3]}},
                {"stride", std::vector<int64_t>{1, 1}},
                {"pads", std::vector<int64_t>{0, 0, 0, 0}}})};
}

bool output_used(const NodeProto& n, int i) {
  return i < n.output_size() && !n.output(i).empty();
}

std::vector<TensorRef> batchnorm(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  if (at.i("training_mode", 0) != 0) throw Decline{"training_mode"};
  for (int i = 1; i < 5; ++i)
    if (output_used(n, i)) throw Decline{"running statistics outputs are used"};
  std::vector<TensorRef> in;
  for (int i = 0; i < 5; ++i) in.push_back(c.data(n, i));
  return {c.op(n, "batchnorm", std::move(in),
               {{"epsilon", static_cast<double>(at.f("epsilon", 1e-5f))}})};
}

std::vector<TensorRef> layernorm(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  if (output_used(n, 1) || output_used(n, 2)) throw Decline{"Mean/InvStdDev outputs are used"};
  std::vector<TensorRef> in{c.data(n, 0), c.data(n, 1)};
  if (c.has_input(n, 2)) in.push_back(c.data(n, 2));
  int64_t axis = onnx_axis(n, at.i("axis", -1), static_cast<int64_t>(c.shape(in[0]).size()));
  return {c.op(n, "layernorm", std::move(in),
               {{"axis", axis}, {"epsilon", static_cast<double>(at.f("epsilon", 1e-5f))}})};
}

// RMSNormalization (opset 23): the scale must have the normalized axes' shape exactly (ONNX
// allows any shape that broadcasts to them; graphsub's rms_norm reads the exact one).
std::vector<TensorRef> rms_norm(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  TensorRef x = c.data(n, 0), scale = c.data(n, 1);
  int64_t rank = static_cast<int64_t>(c.shape(x).size());
  int64_t axis = onnx_axis(n, at.i("axis", -1), rank);
  Shape norm(c.shape(x).begin() + axis, c.shape(x).end());
  if (c.shape(scale) != norm)
    throw Decline{fmt::format("scale {} is not the normalized shape {}", shape_str(c.shape(scale)),
                              shape_str(norm))};
  if (at.i("stash_type", 1) != 1) throw Decline{"stash_type other than float"};
  return {c.op(n, "rms_norm", {x, scale},
               {{"axis", axis}, {"epsilon", static_cast<double>(at.f("epsilon", 1e-5f))}})};
}

// Attention (opset 23, 24): Q, K, V of rank 4 ([batch, heads, sequence, head size]), or of
// rank 3 ([batch, sequence, heads * head size], with q_num_heads and kv_num_heads), and an
// optional float mask. Past keys and values, the padding lengths, softcap and the extra
// outputs are other forms: declined (kept opaque).
std::vector<TensorRef> attention(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  for (int i = 4; i < 7; ++i)
    if (c.has_input(n, i)) throw Decline{"past keys and values or padding lengths are given"};
  for (int i = 1; i < 4; ++i)
    if (output_used(n, i)) throw Decline{"present keys and values or the QK output are used"};
  if (at.f("softcap", 0.0f) != 0.0f) throw Decline{"softcap"};
  int64_t causal = at.i("is_causal", 0);
  if (causal != 0 && causal != 1) throw Decline{fmt::format("is_causal {}", causal)};
  std::vector<TensorRef> in{c.data(n, 0), c.data(n, 1), c.data(n, 2)};
  if (c.has_input(n, 3)) in.push_back(c.data(n, 3));
  const Shape& q = c.shape(in[0]);
  Attrs a{{"is_causal", causal}};
  int64_t head_size = q.empty() ? 1 : q.back();
  if (q.size() == 3) {
    int64_t qh = at.i("q_num_heads", 0), kvh = at.i("kv_num_heads", 0);
    if (qh < 1 || kvh < 1 || q[2] % qh != 0)
      throw Decline{fmt::format("rank-3 Q {} with q_num_heads {} and kv_num_heads {}", shape_str(q),
                                qh, kvh)};
    a.set("q_num_heads", qh);
    a.set("kv_num_heads", kvh);
    head_size = q[2] / qh;
  } else if (q.size() != 4) {
    throw Decline{fmt::format("Q of rank {}", q.size())};
  }
  double root = std::sqrt(static_cast<double>(std::max<int64_t>(head_size, 1)));
  a.set("scale", at.has("scale") ? static_cast<double>(at.f("scale", 0.0f)) : 1.0 / root);
  // Forms ONNX allows that the operator does not take (Q of rank 3 with K and V of rank 4, a
  // mask of another rank) stay as they are.
  try {
    return {c.op(n, "attention", std::move(in), std::move(a))};
  } catch (const Error& e) {
    throw Decline{e.what()};
  }
}

// RotaryEmbedding (opset 23): X of rank 4 or 3 (with num_heads), cos and sin per position or,
// with position ids, caches read at them. Position ids are read when they are a constant (the
// operator holds them as an attribute); ids given at run time keep the node opaque.
std::vector<TensorRef> rotary_embedding(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  Attrs a{{"interleaved", at.i("interleaved", 0)},
          {"rotary_embedding_dim", at.i("rotary_embedding_dim", 0)},
          {"num_heads", at.i("num_heads", 0)}};
  if (c.has_input(n, 3)) {
    std::optional<std::vector<int64_t>> ids = c.const_ints(n, 3);
    if (!ids) throw Decline{"position ids are not a constant"};
    a.set("position_ids", std::move(*ids));
  }
  // Forms ONNX allows that the operator does not take (a rank-4 X with num_heads, ids of
  // another shape) stay as they are.
  try {
    return {c.op(n, "rotary_embedding", {c.data(n, 0), c.data(n, 1), c.data(n, 2)}, std::move(a))};
  } catch (const Error& e) {
    throw Decline{e.what()};
  }
}

std::vector<TensorRef> softmax(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  TensorRef x = c.data(n, 0);
  const Shape xs = c.shape(x);
  int64_t rank = static_cast<int64_t>(xs.size());
  if (c.opset >= 13)
    return {c.op(n, "softmax", {x}, {{"axis", onnx_axis(n, at.i("axis", -1), rank)}})};
  // Before opset 13, Softmax normalises over all axes from `axis` on, as one flattened axis.
  int64_t axis = onnx_axis(n, at.i("axis", 1), rank);
  if (axis == rank - 1) return {c.op(n, "softmax", {x}, {{"axis", axis}})};
  int64_t rows = numel(Shape(xs.begin(), xs.begin() + axis));
  TensorRef flat =
      c.op(n, "reshape", {x},
           {{"shape", std::vector<int64_t>{rows, numel(xs) / std::max<int64_t>(rows, 1)}}});
  TensorRef y = c.op(n, "softmax", {flat}, {{"axis", int64_t{1}}});
  return {c.op(n, "reshape", {y}, {{"shape", std::vector<int64_t>(xs.begin(), xs.end())}})};
}

// ReduceMean / ReduceSum; the axes are an attribute, or a constant input where the opset
// made them one (ReduceSum from 13, ReduceMean from 18).
template <bool Mean>
std::vector<TensorRef> reduce(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  TensorRef x = c.data(n, 0);
  int64_t rank = static_cast<int64_t>(c.shape(x).size());
  std::vector<int64_t> given = at.ints("axes", {});
  if (c.has_input(n, 1)) {
    auto v = c.const_ints(n, 1);
    if (!v) throw Decline{fmt::format("axes '{}' are computed at run time", n.input(1))};
    given = *v;
  }
  if (given.empty() && at.i("noop_with_empty_axes", 0)) return {c.op(n, "identity", {x})};
  std::vector<int64_t> axes;
  for (int64_t a : given) axes.push_back(onnx_axis(n, a, rank));
  std::sort(axes.begin(), axes.end());
  return {c.op(n, Mean ? "reduce_mean" : "reduce_sum", {x},
               {{"axes", axes}, {"keepdims", at.i("keepdims", 1)}})};
}

// ---- indexing with constant parameters (integer shape computations are folded before) ----

std::vector<int64_t> const_ints_input(ImportContext& c, const NodeProto& n, int i,
                                      const char* what) {
  auto v = c.const_ints(n, i);
  // A node may have fewer inputs than its operator takes (the fuzzer's Gather and Resize
  // with one input): reading the name of an absent one aborted inside protobuf.
  if (!v && (i >= n.input_size() || n.input(i).empty()))
    throw Decline{fmt::format("{} is not given", what)};
  if (!v)
    throw Decline{
        fmt::format("{} '{}' is computed at run time", what, ImportContext::input_name(n, i))};
  return *v;
}

std::vector<TensorRef> expand(ImportContext& c, const NodeProto& n) {
  TensorRef x = c.data(n, 0);
  auto shape = const_ints_input(c, n, 1, "Expand's shape");
  return {c.op(n, "expand", {x}, {{"shape", shape}})};
}

std::vector<TensorRef> gather(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  TensorRef x = c.data(n, 0);
  auto indices = const_ints_input(c, n, 1, "Gather's indices");
  const Shape& is = c.shape(c.input(n, 1));
  int64_t axis = onnx_axis(n, at.i("axis", 0), static_cast<int64_t>(c.shape(x).size()));
  return {c.op(n, "gather", {x},
               {{"axis", axis},
                {"indices", indices},
                {"indices_shape", std::vector<int64_t>(is.begin(), is.end())}})};
}

// Resize (opset 11+) of NCHW images in the spatial axes, with constant scales or sizes.
std::vector<TensorRef> resize(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  TensorRef x = image(c, n, 0);
  const Shape& xs = c.shape(x);
  std::string mode = at.s("mode", "nearest");
  if (mode != "nearest" && mode != "linear") throw Decline{fmt::format("mode '{}'", mode)};
  std::string coord = at.s("coordinate_transformation_mode", "half_pixel");
  if (coord != "half_pixel" && coord != "asymmetric" && coord != "align_corners" &&
      coord != "pytorch_half_pixel")
    throw Decline{fmt::format("coordinate_transformation_mode '{}'", coord)};
  if (at.i("antialias", 0) != 0) throw Decline{"antialias"};
  if (at.i("exclude_outside", 0) != 0) throw Decline{"exclude_outside"};
  if (at.has("axes") || at.s("keep_aspect_ratio_policy", "stretch") != "stretch")
    throw Decline{"axes or keep_aspect_ratio_policy"};
  std::vector<int64_t> sizes;
  double sh = 0, sw = 0;
  const std::vector<float>* scales = nullptr;
  if (c.has_input(n, 2) && numel(c.shape(c.input(n, 2))) > 0) {
    scales = c.const_floats(c.input(n, 2));
    if (!scales) throw Decline{"scales are computed at run time"};
  }
  if (scales) {
    if (scales->size() != 4 || (*scales)[0] != 1 || (*scales)[1] != 1)
      throw Decline{"scales other than [1, 1, h, w]"};
    sh = (*scales)[2];
    sw = (*scales)[3];
    // Checked before the conversion: a scale that is not finite or too large has no
    // int64 output size (and converting it would be undefined behaviour).
    for (double v : {static_cast<double>(xs[2]) * sh, static_cast<double>(xs[3]) * sw})
      if (!(std::floor(v) >= 1 && std::floor(v) <= static_cast<double>(int64_t{1} << 40)))
        throw Error(fmt::format("{}: scales [{}, {}] give an output size {} outside [1, 2^40]",
                                ImportContext::label(n), sh, sw, v));
    sizes = {static_cast<int64_t>(std::floor(static_cast<double>(xs[2]) * sh)),
             static_cast<int64_t>(std::floor(static_cast<double>(xs[3]) * sw))};
  } else {
    auto s = const_ints_input(c, n, 3, "Resize's sizes");
    if (s.size() != 4 || s[0] != xs[0] || s[1] != xs[1])
      throw Decline{"sizes that change the batch or channels"};
    sizes = {s[2], s[3]};
    sh = static_cast<double>(s[2]) / static_cast<double>(xs[2]);
    sw = static_cast<double>(s[3]) / static_cast<double>(xs[3]);
  }
  return {c.op(n, "resize", {x},
               {{"mode", mode},
                {"coordinate_transformation_mode", coord},
                {"nearest_mode", at.s("nearest_mode", "round_prefer_floor")},
                {"sizes", sizes},
                {"scale_h", sh},
                {"scale_w", sw}})};
}

}  // namespace

void check_window_attributes(const NodeProto& n) {
  static const std::set<std::string> windowed = {"Conv",        "ConvTranspose", "ConvInteger",
                                                 "QLinearConv", "MaxPool",       "AveragePool",
                                                 "LpPool",      "MaxUnpool",     "DeformConv"};
  if (!(n.domain().empty() || n.domain() == "ai.onnx") || !windowed.count(n.op_type())) return;
  NodeAttrs at(n, ImportContext::label(n));
  for (const char* name : {"strides", "dilations", "kernel_shape"})
    if (at.has(name)) check_window_values(n, name, at.ints(name, {}), 1);
  if (at.has("pads")) check_window_values(n, "pads", at.ints("pads", {}), 0);
}

void add_nn_converters(std::map<std::string, Converter>& t) {
  t["Conv"] = conv;
  t["MaxPool"] = pool<true>;
  t["AveragePool"] = pool<false>;
  t["GlobalAveragePool"] = global_avgpool;
  t["GlobalMaxPool"] = global_maxpool;
  t["BatchNormalization"] = batchnorm;
  t["LayerNormalization"] = layernorm;
  t["RMSNormalization"] = rms_norm;
  t["Softmax"] = softmax;
  t["Attention"] = attention;
  t["RotaryEmbedding"] = rotary_embedding;
  t["ReduceMean"] = reduce<true>;
  t["ReduceSum"] = reduce<false>;
  t["Expand"] = expand;
  t["Gather"] = gather;
  t["Resize"] = resize;
}

}  // namespace graphsub
