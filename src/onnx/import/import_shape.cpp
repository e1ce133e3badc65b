// Converters for operators that move data without arithmetic (Concat, Split, Slice, Reshape,
// Flatten, Transpose, Squeeze, Unsqueeze, Pad), for Constant and Shape (which become weights)
// and for Identity, Dropout and Casts to their own type (which are removed).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "onnx/format/tensor_proto.h"
#include "onnx/import/import_context.h"

namespace graphsub {
namespace {

using onnx::NodeProto;

// Integer values of an input that graphsub needs at import time (shape, axes, pads).
std::vector<int64_t> need_ints(ImportContext& c, const NodeProto& n, int i, const char* what) {
  auto v = c.const_ints(n, i);
  if (!v)
    throw Decline{
        fmt::format("{} ('{}') is computed at run time", what, ImportContext::input_name(n, i))};
  return *v;
}

// Axes from the attribute (before opset 13) or the input (from 13), when present.
std::optional<std::vector<int64_t>> axes_of(ImportContext& c, const NodeProto& n, int input) {
  if (c.opset < 13) {
    NodeAttrs at(n, ImportContext::label(n));
    if (!at.has("axes")) return std::nullopt;
    return at.ints("axes", {});
  }
  if (!c.has_input(n, input)) return std::nullopt;
  return need_ints(c, n, input, "axes");
}

std::vector<TensorRef> concat(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  if (!at.has("axis"))
    throw Error(fmt::format("{}: attribute 'axis' is required", ImportContext::label(n)));
  std::vector<TensorRef> in;
  for (int i = 0; i < n.input_size(); ++i) in.push_back(c.data(n, i));
  if (in.empty()) throw Error(fmt::format("{}: no inputs", ImportContext::label(n)));
  int64_t axis = onnx_axis(n, at.i("axis", 0), static_cast<int64_t>(c.shape(in[0]).size()));
  if (in.size() == 1) return {in[0]};
  return {c.op(n, "concat", std::move(in), {{"axis", axis}})};
}

std::vector<TensorRef> split(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  TensorRef x = c.data(n, 0);
  const Shape& xs = c.shape(x);
  int64_t axis = onnx_axis(n, at.i("axis", 0), static_cast<int64_t>(xs.size()));
  std::vector<int64_t> sizes;
  if (c.opset < 13)
    sizes = at.ints("split", {});
  else if (c.has_input(n, 1))
    sizes = need_ints(c, n, 1, "split sizes");
  int64_t parts = n.output_size();
  if (sizes.empty() && c.opset >= 18 && at.has("num_outputs")) {
    // Split-18 by num_outputs: parts of ceil(d / n), the last one smaller when n does not
    // divide d.
    if (at.i("num_outputs", 0) != parts)
      throw Error(fmt::format("{}: num_outputs {} but {} outputs", ImportContext::label(n),
                              at.i("num_outputs", 0), parts));
    int64_t d = xs[axis], each = parts > 0 ? (d + parts - 1) / parts : 0;
    for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::clamp<int64_t>(d - i * each, 0, each));
  }
  if (sizes.empty()) {
    if (parts < 1 || xs[axis] % parts != 0)
      throw Error(fmt::format("{}: cannot split dimension {} of {} into {} equal parts",
                              ImportContext::label(n), axis, shape_str(xs), parts));
    sizes.assign(static_cast<size_t>(parts), xs[axis] / parts);
  }
  if (static_cast<int64_t>(sizes.size()) != parts)
    throw Error(fmt::format("{}: {} split sizes for {} outputs", ImportContext::label(n),
                            sizes.size(), parts));
  if (parts == 1) return {x};
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) throw Decline{"an empty part"};
  return c.op_multi(n, "split", {x}, {{"axis", axis}, {"sizes", sizes}});
}

// Whether a Slice of `shape` keeps every element in order: each sliced axis from its start
// (a start at or before it) to its end (an end at or past it) in steps of 1. timm's GhostNet
// writes 32 of them (x[:, :out] of exactly out channels); each is a copy in ONNX Runtime,
// and one that keeps the convolutions around it from sharing the blocked layout.
bool copies_whole_input(const Attrs& a, const Shape& shape) {
  const auto& starts = a.ints("starts");
  const auto& ends = a.ints("ends");
  std::vector<int64_t> axes = a.has("axes") ? a.ints("axes") : std::vector<int64_t>{};
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> steps = a.has("steps") ? a.ints("steps") : std::vector<int64_t>{};
  if (starts.size() != ends.size() || axes.size() != starts.size() ||
      (!steps.empty() && steps.size() != starts.size()))
    return false;  // malformed: the slice operator's own checks name it
  auto rank = static_cast<int64_t>(shape.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return false;
    int64_t dim = shape[static_cast<size_t>(axis)];
    if (dim <= 0 || (!steps.empty() && steps[i] != 1)) return false;
    if (!(starts[i] == 0 || starts[i] <= -dim) || ends[i] < dim) return false;
  }
  return true;
}

// The slice of `x`, or `x` itself where the slice keeps all of it (counted as a no-op).
std::vector<TensorRef> slice_or_input(ImportContext& c, const NodeProto& n, TensorRef x, Attrs a) {
  if (copies_whole_input(a, c.shape(x)) && !c.slices_kept.count(n.output(0))) {
    ++c.summary.no_ops;
    c.no_op_slices.insert(n.output(0));
    return {x};
  }
  return {c.op(n, "slice", {x}, std::move(a))};
}

std::vector<TensorRef> slice(ImportContext& c, const NodeProto& n) {
  TensorRef x = c.data(n, 0);
  if (c.opset < 10) {
    // Slice-1: starts, ends and optional axes as attributes, no steps.
    NodeAttrs at(n, ImportContext::label(n));
    if (!at.has("starts") || !at.has("ends"))
      throw Error(
          fmt::format("{}: attributes 'starts' and 'ends' are required", ImportContext::label(n)));
    Attrs a{{"starts", at.ints("starts", {})}, {"ends", at.ints("ends", {})}};
    if (at.has("axes")) a.set("axes", at.ints("axes", {}));
    return slice_or_input(c, n, x, std::move(a));
  }
  Attrs a{{"starts", need_ints(c, n, 1, "starts")}, {"ends", need_ints(c, n, 2, "ends")}};
  if (c.has_input(n, 3)) a.set("axes", need_ints(c, n, 3, "axes"));
  if (c.has_input(n, 4)) a.set("steps", need_ints(c, n, 4, "steps"));
  return slice_or_input(c, n, x, std::move(a));
}

// A reshape to a concrete shape (what Reshape, Squeeze and Unsqueeze all are here).
TensorRef reshape_to(ImportContext& c, const NodeProto& n, TensorRef x, const Shape& s) {
  if (s == c.shape(x)) return x;
  return c.op(n, "reshape", {x}, {{"shape", std::vector<int64_t>(s.begin(), s.end())}});
}

std::vector<TensorRef> reshape(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  TensorRef x = c.data(n, 0);
  const Shape& xs = c.shape(x);
  auto spec = c.const_ints(n, 1);
  if (!spec) {
    // The target shape is computed at run time (Shape -> Gather -> Concat chains); ONNX data
    // propagation usually knows its value for the static shapes graphsub imports.
    auto inferred = c.inferred_shape(n, 0);
    if (!inferred)
      throw Decline{n.input_size() > 1
                        ? fmt::format("target shape '{}' is computed at run time", n.input(1))
                        : std::string("the target shape is not given")};
    return {reshape_to(c, n, x, *inferred)};
  }
  bool allowzero = at.i("allowzero", 0) != 0;
  Shape s;
  int64_t infer_at = -1, known = 1;
  for (size_t i = 0; i < spec->size(); ++i) {
    int64_t d = (*spec)[i];
    if (d == 0 && !allowzero) {
      if (i >= xs.size())
        throw Error(fmt::format("{}: shape {} copies dimension {} of rank-{} input",
                                ImportContext::label(n), shape_str(*spec), i, xs.size()));
      d = xs[i];
    }
    if (d == -1) {
      if (infer_at >= 0)
        throw Error(
            fmt::format("{}: shape {} has two -1", ImportContext::label(n), shape_str(*spec)));
      infer_at = static_cast<int64_t>(i);
    } else if (d < 0) {
      throw Error(fmt::format("{}: shape {} has a negative dimension", ImportContext::label(n),
                              shape_str(*spec)));
    } else {
      auto k = checked_mul(known, d);
      if (!k)
        throw Error(fmt::format("{}: shape {} has more than 2^60 elements", ImportContext::label(n),
                                shape_str(*spec)));
      known = *k;
    }
    s.push_back(d);
  }
  if (infer_at >= 0) {
    if (known == 0 || numel(xs) % known != 0)
      throw Error(fmt::format("{}: cannot reshape {} to {}", ImportContext::label(n), shape_str(xs),
                              shape_str(*spec)));
    s[static_cast<size_t>(infer_at)] = numel(xs) / known;
  }
  if (numel(s) != numel(xs))
    throw Error(fmt::format("{}: cannot reshape {} ({} elements) to {}", ImportContext::label(n),
                            shape_str(xs), numel(xs), shape_str(s)));
  return {reshape_to(c, n, x, s)};
}

std::vector<TensorRef> flatten(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  TensorRef x = c.data(n, 0);
  int64_t rank = static_cast<int64_t>(c.shape(x).size());
  int64_t axis = at.i("axis", 1);
  if (axis < -rank || axis > rank)
    throw Error(fmt::format("{}: axis {} is out of range for rank {}", ImportContext::label(n),
                            axis, rank));
  if (axis < 0) axis += rank;
  return {c.op(n, "flatten", {x}, {{"axis", axis}})};
}

std::vector<TensorRef> transpose(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  TensorRef x = c.data(n, 0);
  int64_t rank = static_cast<int64_t>(c.shape(x).size());
  std::vector<int64_t> perm = at.ints("perm", {});
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  return {c.op(n, "transpose", {x}, {{"perm", perm}})};
}

std::vector<TensorRef> squeeze(ImportContext& c, const NodeProto& n) {
  TensorRef x = c.data(n, 0);
  const Shape& xs = c.shape(x);
  int64_t rank = static_cast<int64_t>(xs.size());
  std::vector<bool> drop(xs.size(), false);
  if (auto axes = axes_of(c, n, 1)) {
    for (int64_t a : *axes) {
      int64_t d = onnx_axis(n, a, rank);
      if (xs[d] != 1)
        throw Error(fmt::format("{}: cannot squeeze axis {} of {} (size {})",
                                ImportContext::label(n), d, shape_str(xs), xs[d]));
      drop[d] = true;
    }
  } else {
    for (size_t d = 0; d < xs.size(); ++d) drop[d] = xs[d] == 1;
  }
  Shape s;
  for (size_t d = 0; d < xs.size(); ++d)
    if (!drop[d]) s.push_back(xs[d]);
  return {reshape_to(c, n, x, s)};
}

std::vector<TensorRef> unsqueeze(ImportContext& c, const NodeProto& n) {
  TensorRef x = c.data(n, 0);
  const Shape& xs = c.shape(x);
  auto axes = axes_of(c, n, 1);
  if (!axes) throw Error(fmt::format("{}: axes are required", ImportContext::label(n)));
  int64_t out_rank = static_cast<int64_t>(xs.size() + axes->size());
  std::vector<bool> ins(static_cast<size_t>(out_rank), false);
  for (int64_t a : *axes) {
    int64_t d = onnx_axis(n, a, out_rank);
    if (ins[d]) throw Error(fmt::format("{}: axis {} repeated", ImportContext::label(n), d));
    ins[d] = true;
  }
  Shape s;
  size_t k = 0;
  for (int64_t d = 0; d < out_rank; ++d) s.push_back(ins[d] ? 1 : xs[k++]);
  return {reshape_to(c, n, x, s)};
}

// Pad-18's pads for the axes its `axes` input lists (begins, then ends), spread over all
// axes as the earlier versions give them.
std::vector<int64_t> pads_over_all_axes(ImportContext& c, const NodeProto& n,
                                        const std::vector<int64_t>& pads) {
  auto axes = need_ints(c, n, 3, "Pad's axes");
  int64_t rank = static_cast<int64_t>(c.shape(c.input(n, 0)).size());
  int64_t k = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads.size()) != 2 * k)
    throw Error(fmt::format("{}: {} pads for {} axes", ImportContext::label(n), pads.size(), k));
  std::vector<int64_t> all(static_cast<size_t>(2 * rank), 0);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < k; ++i) {
    int64_t a = onnx_axis(n, axes[static_cast<size_t>(i)], rank);
    if (!seen.insert(a).second)
      throw Error(fmt::format("{}: axis {} is repeated", ImportContext::label(n), a));
    all[static_cast<size_t>(a)] = pads[static_cast<size_t>(i)];
    all[static_cast<size_t>(a + rank)] = pads[static_cast<size_t>(i + k)];
  }
  return all;
}

std::vector<TensorRef> pad(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  std::string mode = at.s("mode", "constant");
  if (mode != "constant") throw Decline{fmt::format("Pad mode '{}'", mode)};
  TensorRef x = c.data(n, 0);
  if (c.opset < 11) {
    // Pad-2: pads and value as attributes.
    if (!at.has("pads"))
      throw Error(fmt::format("{}: attribute 'pads' is required", ImportContext::label(n)));
    return {
        c.op(n, "pad", {x},
             {{"pads", at.ints("pads", {})}, {"value", static_cast<double>(at.f("value", 0))}})};
  }
  auto pads = need_ints(c, n, 1, "pads");
  if (c.has_input(n, 3)) pads = pads_over_all_axes(c, n, pads);
  double value = 0;
  if (c.has_input(n, 2)) {
    const auto* v = c.const_floats(c.input(n, 2));
    if (!v || v->size() != 1) throw Decline{"pad value is not a constant float scalar"};
    value = (*v)[0];
  }
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) {
    ++c.summary.no_ops;  // torchvision's Swin pads its windows by 0 at 224 pixels
    return {x};
  }
  return {c.op(n, "pad", {x}, {{"pads", pads}, {"value", value}})};
}

std::vector<TensorRef> identity(ImportContext& c, const NodeProto& n) {
  ++c.summary.removed;
  return {c.input(n, 0)};
}

// A Cast to the type its input already has is the identity, exactly (NaNs included; saturate
// only concerns float8 targets). torch writes them around rotary embeddings (`q.float()` on a
// float32 tensor): ModernBERT's export has 138, which cost a kernel each and, between two
// Transposes, keep ONNX Runtime from merging them. Any other Cast has no graphsub semantics.
std::vector<TensorRef> cast(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  auto known = c.onnx_types.find(n.input(0));
  int64_t from = known == c.onnx_types.end() ? 0 : known->second.elem_type;
  if (from == 0 || at.i("to", 0) != from) throw Decline{"no graphsub semantics for this operator"};
  ++c.summary.no_ops;
  return {c.input(n, 0)};
}

std::vector<TensorRef> dropout(ImportContext& c, const NodeProto& n) {
  if (n.output_size() > 1 && !n.output(1).empty()) throw Decline{"Dropout's mask output is used"};
  if (c.has_input(n, 2)) {
    auto training = c.const_ints(n, 2);
    if (!training || training->size() != 1 || (*training)[0] != 0)
      throw Decline{"Dropout may run in training mode"};
  }
  NodeAttrs at(n, ImportContext::label(n));
  if (c.opset < 12 && at.i("is_test", 1) == 0) throw Decline{"Dropout in training mode"};
  ++c.summary.removed;
  return {c.input(n, 0)};
}

std::vector<TensorRef> constant(ImportContext& c, const NodeProto& n) {
  NodeAttrs at(n, ImportContext::label(n));
  const std::string& name = n.output(0);
  std::string what = fmt::format("{} value", ImportContext::label(n));
  if (const onnx::TensorProto* t = at.tensor("value")) {
    if (t->data_location() == onnx::TensorProto::EXTERNAL) throw Decline{"external constant data"};
    if (t->data_type() == onnx::TensorProto::FLOAT)
      return {c.float_weight(name, tensor_dims(*t, what), tensor_floats(*t, what))};
    if (t->data_type() == onnx::TensorProto::INT64 || t->data_type() == onnx::TensorProto::INT32)
      return {c.int_weight(name, tensor_dims(*t, what), tensor_ints(*t, what))};
    throw Decline{fmt::format("constant of type {}", onnx_type_name(t->data_type()))};
  }
  if (at.has("value_float")) return {c.float_weight(name, {}, {at.f("value_float", 0)})};
  if (at.has("value_int")) return {c.int_weight(name, {}, {at.i("value_int", 0)})};
  if (at.has("value_ints")) {
    auto v = at.ints("value_ints", {});
    int64_t len = static_cast<int64_t>(v.size());
    return {c.int_weight(name, {len}, std::move(v))};
  }
  throw Decline{"constant of this kind (strings, sparse or float lists)"};
}

// Shape of a tensor whose shape is static: a constant.
std::vector<TensorRef> shape_of(ImportContext& c, const NodeProto& n) {
  const Shape& xs = c.shape(c.input(n, 0));
  NodeAttrs at(n, ImportContext::label(n));
  int64_t rank = static_cast<int64_t>(xs.size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  int64_t start = clamp(at.i("start", 0)), end = clamp(at.i("end", rank));
  std::vector<int64_t> v;
  for (int64_t i = start; i < end; ++i) v.push_back(xs[i]);
  int64_t len = static_cast<int64_t>(v.size());
  return {c.int_weight(n.output(0), {len}, std::move(v))};
}

}  // namespace

void add_shape_converters(std::map<std::string, Converter>& t) {
  t["Concat"] = concat;
  t["Split"] = split;
  t["Slice"] = slice;
  t["Reshape"] = reshape;
  t["Flatten"] = flatten;
  t["Transpose"] = transpose;
  t["Squeeze"] = squeeze;
  t["Unsqueeze"] = unsqueeze;
  t["Pad"] = pad;
  t["Identity"] = identity;
  t["Dropout"] = dropout;
  t["Cast"] = cast;
  t["Constant"] = constant;
  t["Shape"] = shape_of;
}

}  // namespace graphsub
