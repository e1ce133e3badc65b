// Operators that move or make values: Reshape, Squeeze, Unsqueeze, Expand, Concat, Gather,
// Slice, Transpose, Range, ConstantOfShape, Constant.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <set>

#include "onnx/evaluate/node_evaluator.h"

namespace graphsub::evaluate {

HostConstant NodeEvaluator::with_dims(const HostConstant& x, Shape dims) const {
  if (numel(dims) != x.numel())
    fail(fmt::format("cannot reshape {} to {}", shape_str(x.dims), shape_str(dims)));
  HostConstant r = x;
  r.dims = std::move(dims);
  return r;
}

HostConstant NodeEvaluator::reshape() {
  const HostConstant& x = need(0);
  std::vector<int64_t> spec = ints_of(1);
  bool allowzero = at_.i("allowzero", 0) != 0;
  Shape s;
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == 0 && !allowzero) {
      if (i >= x.dims.size()) fail(fmt::format("shape {} copies a missing dimension", i));
      d = x.dims[i];
    }
    if (d == -1) {
      if (infer >= 0) fail("the target shape has two -1");
      infer = static_cast<int64_t>(i);
    } else if (d < 0) {
      fail(fmt::format("the target shape {} has a negative dimension", shape_str(spec)));
    } else {
      known *= d;
    }
    s.push_back(d);
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      fail(fmt::format("cannot reshape {} to {}", shape_str(x.dims), shape_str(spec)));
    s[static_cast<size_t>(infer)] = x.numel() / known;
  }
  return with_dims(x, s);
}

HostConstant NodeEvaluator::squeeze() {
  const HostConstant& x = need(0);
  int64_t rank = static_cast<int64_t>(x.dims.size());
  std::vector<bool> drop(x.dims.size(), false);
  if (auto ax = axes(13, 1)) {
    for (int64_t a : *ax) {
      int64_t d = axis(a, rank);
      if (x.dims[d] != 1) fail(fmt::format("cannot squeeze axis {} of {}", d, shape_str(x.dims)));
      drop[d] = true;
    }
  } else {
    for (size_t d = 0; d < x.dims.size(); ++d) drop[d] = x.dims[d] == 1;
  }
  Shape s;
  for (size_t d = 0; d < x.dims.size(); ++d)
    if (!drop[d]) s.push_back(x.dims[d]);
  return with_dims(x, s);
}

HostConstant NodeEvaluator::unsqueeze() {
  const HostConstant& x = need(0);
  auto ax = axes(13, 1);
  if (!ax) fail("axes are required");
  int64_t rank = static_cast<int64_t>(x.dims.size() + ax->size());
  std::vector<bool> ins(static_cast<size_t>(rank), false);
  for (int64_t a : *ax) {
    int64_t d = axis(a, rank);
    if (ins[d]) fail(fmt::format("axis {} repeated", d));
    ins[d] = true;
  }
  Shape s;
  size_t k = 0;
  for (int64_t d = 0; d < rank; ++d) s.push_back(ins[d] ? 1 : x.dims[k++]);
  return with_dims(x, s);
}

HostConstant NodeEvaluator::expand() {
  const HostConstant& x = need(0);
  std::vector<int64_t> shape = ints_of(1);
  for (int64_t d : shape)
    if (d < 0) fail(fmt::format("Expand shape {} has a negative dimension", shape_str(shape)));
  Shape out = broadcast(x.dims, shape);
  HostConstant r = make(x.elem_type, out);
  auto map = broadcast_map(x.dims, out);
  for (size_t k = 0; k < map.size(); ++k) copy_elem(x, map[k], r, static_cast<int64_t>(k));
  return r;
}

HostConstant NodeEvaluator::concat() {
  if (n_.input_size() < 1) fail("no inputs");
  const HostConstant& first = need(0);
  int64_t rank = static_cast<int64_t>(first.dims.size());
  int64_t ax = axis(at_.i("axis", 0), rank);
  Shape out = first.dims;
  out[ax] = 0;
  for (int i = 0; i < n_.input_size(); ++i) {
    const HostConstant& c = need(static_cast<size_t>(i));
    if (c.elem_type != first.elem_type) throw Unsupported{};
    bool same = static_cast<int64_t>(c.dims.size()) == rank;
    for (int64_t d = 0; same && d < rank; ++d) same = d == ax || c.dims[d] == first.dims[d];
    if (!same)
      fail(fmt::format("cannot concatenate {} and {} on axis {}", shape_str(first.dims),
                       shape_str(c.dims), ax));
    out[ax] += c.dims[ax];
  }
  HostConstant r = make(first.elem_type, out);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < ax; ++d) outer *= out[d];
  for (int64_t d = ax + 1; d < rank; ++d) inner *= out[d];
  int64_t offset = 0;
  for (int i = 0; i < n_.input_size(); ++i) {
    const HostConstant& c = need(static_cast<size_t>(i));
    int64_t chunk = c.dims[ax] * inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < chunk; ++k)
        copy_elem(c, o * chunk + k, r, o * out[ax] * inner + offset + k);
    offset += chunk;
  }
  return r;
}

HostConstant NodeEvaluator::gather() {
  const HostConstant& x = need(0);
  const HostConstant& idx = need(1);
  if (idx.real()) throw Unsupported{};
  int64_t rank = static_cast<int64_t>(x.dims.size());
  if (rank == 0) fail("Gather on a scalar");
  int64_t ax = axis(at_.i("axis", 0), rank);
  Shape out(x.dims.begin(), x.dims.begin() + ax);
  out.insert(out.end(), idx.dims.begin(), idx.dims.end());
  out.insert(out.end(), x.dims.begin() + ax + 1, x.dims.end());
  HostConstant r = make(x.elem_type, out);
  int64_t outer = 1, inner = 1, len = x.dims[ax];
  for (int64_t d = 0; d < ax; ++d) outer *= x.dims[d];
  for (int64_t d = ax + 1; d < rank; ++d) inner *= x.dims[d];
  int64_t count = idx.numel();
  for (int64_t k = 0; k < count; ++k) {
    int64_t j = idx.ints[static_cast<size_t>(k)];
    if (j < -len || j >= len)
      fail(fmt::format("index {} is out of range for dimension {} of size {}", j, ax, len));
    if (j < 0) j += len;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        copy_elem(x, (o * len + j) * inner + i, r, (o * count + k) * inner + i);
  }
  return r;
}

HostConstant NodeEvaluator::slice() {
  const HostConstant& x = need(0);
  std::vector<int64_t> starts = ints_of(1), ends = ints_of(2);
  int64_t rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> ax, steps;
  if (has(3)) {
    ax = ints_of(3);
  } else {
    for (size_t i = 0; i < starts.size(); ++i) ax.push_back(static_cast<int64_t>(i));
  }
  steps = has(4) ? ints_of(4) : std::vector<int64_t>(starts.size(), 1);
  if (ends.size() != starts.size() || ax.size() != starts.size() || steps.size() != starts.size())
    fail("starts, ends, axes and steps differ in length");
  std::vector<int64_t> first(x.dims.size(), 0), step(x.dims.size(), 1);
  Shape out = x.dims;
  std::set<int64_t> seen;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t a = axis(ax[i], rank);
    if (!seen.insert(a).second) fail(fmt::format("axis {} repeated", a));
    int64_t d = x.dims[a], s = starts[i], e = ends[i], st = steps[i];
    if (st == 0) fail("a step is 0");
    if (s < 0) s += d;
    if (e < 0) e += d;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      out[a] = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      out[a] = s > e ? (s - e + (-st) - 1) / (-st) : 0;
    }
    first[a] = s;
    step[a] = st;
  }
  HostConstant r = make(x.elem_type, out);
  auto in_st = strides_of(x.dims);
  std::vector<int64_t> idx(out.size(), 0);
  for (int64_t k = 0; k < r.numel(); ++k) {
    int64_t off = 0;
    for (size_t d = 0; d < out.size(); ++d) off += (first[d] + idx[d] * step[d]) * in_st[d];
    copy_elem(x, off, r, k);
    next_index(idx, out);
  }
  return r;
}

HostConstant NodeEvaluator::transpose() {
  const HostConstant& x = need(0);
  int64_t rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> perm = at_.ints("perm", {});
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank) fail("perm does not match the rank");
  Shape out;
  for (int64_t p : perm) out.push_back(x.dims[axis(p, rank)]);
  HostConstant r = make(x.elem_type, out);
  auto in_st = strides_of(x.dims);
  std::vector<int64_t> idx(out.size(), 0);
  for (int64_t k = 0; k < r.numel(); ++k) {
    int64_t off = 0;
    for (size_t d = 0; d < out.size(); ++d) off += idx[d] * in_st[axis(perm[d], rank)];
    copy_elem(x, off, r, k);
    next_index(idx, out);
  }
  return r;
}

// ScatterND without reduction: a copy of data with the slices that indices name replaced by
// updates (torchvision's Swin builds its shifted-window mask so, from constants).
HostConstant NodeEvaluator::scatter_nd() {
  if (at_.s("reduction", "none") != "none") throw Unsupported{};
  const HostConstant &x = need(0), &idx = need(1), &upd = need(2);
  if (idx.real() || upd.elem_type != x.elem_type || idx.dims.empty()) throw Unsupported{};
  int64_t rank = static_cast<int64_t>(x.dims.size()), k = idx.dims.back();
  if (k < 1 || k > rank) fail(fmt::format("indices address {} of {} dimensions", k, rank));
  Shape want(idx.dims.begin(), idx.dims.end() - 1);
  want.insert(want.end(), x.dims.begin() + k, x.dims.end());
  if (upd.dims != want)
    fail(fmt::format("updates have shape {}, expected {}", shape_str(upd.dims), shape_str(want)));
  HostConstant r = x;
  int64_t slice = 1;
  for (int64_t d = k; d < rank; ++d) slice *= x.dims[d];
  auto st = strides_of(x.dims);
  int64_t count = k ? idx.numel() / k : 0;
  for (int64_t j = 0; j < count; ++j) {
    int64_t off = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t v = idx.ints[static_cast<size_t>(j * k + d)], len = x.dims[d];
      if (v < -len || v >= len)
        fail(fmt::format("index {} is out of range for dimension {} of size {}", v, d, len));
      off += (v < 0 ? v + len : v) * st[d];
    }
    for (int64_t i = 0; i < slice; ++i) copy_elem(upd, j * slice + i, r, off + i);
  }
  return r;
}

// Pad in constant mode (pads as the attribute before opset 11, else inputs; axes from 18).
HostConstant NodeEvaluator::pad() {
  if (at_.s("mode", "constant") != "constant") throw Unsupported{};
  const HostConstant& x = need(0);
  int64_t rank = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> given = opset_ < 11 ? at_.ints("pads", {}) : ints_of(1);
  std::vector<int64_t> ax;
  if (opset_ >= 18 && has(3)) {
    ax = ints_of(3);
  } else {
    for (int64_t d = 0; d < rank; ++d) ax.push_back(d);
  }
  if (given.size() != 2 * ax.size()) fail("pads do not match the axes");
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), end(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < ax.size(); ++i) {
    begin[static_cast<size_t>(axis(ax[i], rank))] = given[i];
    end[static_cast<size_t>(axis(ax[i], rank))] = given[i + ax.size()];
  }
  double value = opset_ < 11 ? at_.f("value", 0) : 0;
  if (opset_ >= 11 && has(2)) {
    const HostConstant& v = need(2);
    if (v.numel() != 1 || v.elem_type != x.elem_type) throw Unsupported{};
    value = v.real() ? v.reals[0] : static_cast<double>(v.ints[0]);
  }
  Shape out = x.dims;
  for (int64_t d = 0; d < rank; ++d) {
    out[d] += begin[d] + end[d];
    if (out[d] < 0) fail(fmt::format("pads make dimension {} negative", d));
  }
  HostConstant r = make(x.elem_type, out);
  if (r.real())
    std::fill(r.reals.begin(), r.reals.end(), value);
  else
    std::fill(r.ints.begin(), r.ints.end(), static_cast<int64_t>(value));
  auto out_st = strides_of(out);
  std::vector<int64_t> idx(x.dims.size(), 0);
  for (int64_t k = 0; k < x.numel(); ++k) {
    int64_t off = 0;
    bool inside = true;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t o = idx[d] + begin[d];
      inside = inside && o >= 0 && o < out[d];
      off += o * out_st[d];
    }
    if (inside) copy_elem(x, k, r, off);
    next_index(idx, x.dims);
  }
  return r;
}

HostConstant NodeEvaluator::range() {
  const HostConstant &s = need(0), &l = need(1), &d = need(2);
  if (s.numel() != 1 || l.numel() != 1 || d.numel() != 1) fail("Range takes scalars");
  if (s.real()) {
    double start = s.reals[0], delta = d.reals[0];
    if (delta == 0) fail("Range with delta 0");
    double n = std::ceil((l.reals[0] - start) / delta);
    HostConstant r = make(s.elem_type, {std::max<int64_t>(0, static_cast<int64_t>(n))});
    for (size_t k = 0; k < r.reals.size(); ++k)
      r.reals[k] = fit_real(start + static_cast<double>(k) * delta, s.elem_type);
    return r;
  }
  int64_t start = s.ints[0], limit = l.ints[0], delta = d.ints[0];
  if (delta == 0) fail("Range with delta 0");
  int64_t n = 0;
  if (delta > 0 && limit > start) n = (limit - start + delta - 1) / delta;
  if (delta < 0 && limit < start) n = (start - limit - delta - 1) / -delta;
  HostConstant r = make(s.elem_type, {n});
  for (int64_t k = 0; k < n; ++k) r.ints[static_cast<size_t>(k)] = start + k * delta;
  return r;
}

HostConstant NodeEvaluator::constant_of_shape() {
  std::vector<int64_t> shape = ints_of(0);
  for (int64_t d : shape)
    if (d < 0) fail(fmt::format("shape {} has a negative dimension", shape_str(shape)));
  HostConstant value;
  value.elem_type = TensorProto::FLOAT;
  value.reals = {0.0};
  if (const TensorProto* t = at_.tensor("value")) {
    auto v = host_constant(*t, label_ + " value");
    if (!v || v->numel() != 1) throw Unsupported{};
    value = *v;
  }
  HostConstant r = make(value.elem_type, Shape(shape.begin(), shape.end()));
  for (int64_t k = 0; k < r.numel(); ++k) copy_elem(value, 0, r, k);
  return r;
}

HostConstant NodeEvaluator::constant() {
  if (const TensorProto* t = at_.tensor("value")) {
    auto v = host_constant(*t, label_ + " value");
    if (!v) throw Unsupported{};
    return *v;
  }
  if (at_.has("value_int")) {
    HostConstant r = make(TensorProto::INT64, {});
    r.ints[0] = at_.i("value_int", 0);
    return r;
  }
  if (at_.has("value_ints")) {
    auto v = at_.ints("value_ints", {});
    HostConstant r = make(TensorProto::INT64, {static_cast<int64_t>(v.size())});
    r.ints = std::move(v);
    return r;
  }
  if (at_.has("value_float")) {
    HostConstant r = make(TensorProto::FLOAT, {});
    r.reals[0] = at_.f("value_float", 0);
    return r;
  }
  throw Unsupported{};
}

}  // namespace graphsub::evaluate
