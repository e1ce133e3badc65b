#include "onnx/import_folding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <set>

#include "core/error.h"
#include "onnx/import_context.h"
#include "onnx/tensor_proto.h"

namespace graphsub {
namespace {

using onnx::NodeProto;
using onnx::TensorProto;

// Results larger than this are left to the converters (they are data, not shapes).
constexpr int64_t kMaxFoldedElements = int64_t{1} << 20;

bool real_type(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::DOUBLE;
}

bool int_type(int32_t t) {
  switch (t) {
    case TensorProto::INT64:
    case TensorProto::INT32:
    case TensorProto::INT16:
    case TensorProto::INT8:
    case TensorProto::UINT8:
    case TensorProto::UINT16:
    case TensorProto::UINT32:
    case TensorProto::BOOL:
      return true;
    default:
      return false;
  }
}

// The value an integer of type `t` holds after a store (wrap-around as in C++ casts).
int64_t fit_int(int64_t v, int32_t t) {
  switch (t) {
    case TensorProto::INT32:
      return static_cast<int32_t>(v);
    case TensorProto::INT16:
      return static_cast<int16_t>(v);
    case TensorProto::INT8:
      return static_cast<int8_t>(v);
    case TensorProto::UINT8:
      return static_cast<uint8_t>(v);
    case TensorProto::UINT16:
      return static_cast<uint16_t>(v);
    case TensorProto::UINT32:
      return static_cast<uint32_t>(v);
    case TensorProto::BOOL:
      return v != 0;
    default:
      return v;
  }
}

double fit_real(double v, int32_t t) {
  return t == TensorProto::FLOAT ? static_cast<double>(static_cast<float>(v)) : v;
}

// Thrown inside the evaluator when a node's form is not handled; fold_node returns nullopt.
struct Unsupported {};

HostConstant make(int32_t type, Shape dims) {
  HostConstant c;
  c.elem_type = type;
  c.dims = std::move(dims);
  if (c.numel() > kMaxFoldedElements) throw Unsupported{};
  if (real_type(type))
    c.reals.assign(static_cast<size_t>(c.numel()), 0.0);
  else
    c.ints.assign(static_cast<size_t>(c.numel()), 0);
  return c;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// Advances a multi-index over `dims` in row-major order (the last dimension fastest).
void next_index(std::vector<int64_t>& idx, const Shape& dims) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < dims[d]) return;
    idx[d] = 0;
  }
}

// Copies element `from` of `src` to element `to` of `dst` (same element kind).
void copy_elem(const HostConstant& src, int64_t from, HostConstant& dst, int64_t to) {
  if (dst.real())
    dst.reals[static_cast<size_t>(to)] = src.reals[static_cast<size_t>(from)];
  else
    dst.ints[static_cast<size_t>(to)] = src.ints[static_cast<size_t>(from)];
}

class Folder {
 public:
  Folder(const NodeProto& n, const std::vector<const HostConstant*>& in, int64_t opset)
      : n_(n), in_(in), opset_(opset), label_(ImportContext::label(n)), at_(n, label_) {}

  std::vector<HostConstant> run();

 private:
  const HostConstant& need(size_t i) const {
    if (i >= in_.size() || !in_[i]) throw Unsupported{};
    return *in_[i];
  }
  bool has(size_t i) const { return i < in_.size() && in_[i]; }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}: {}", label_, what));
  }
  std::vector<int64_t> ints_of(size_t i) const {
    const HostConstant& c = need(i);
    if (c.real()) throw Unsupported{};
    return c.ints;
  }
  int64_t axis(int64_t a, int64_t rank) const { return onnx_axis(n_, a, rank); }
  // Axes from the attribute (before `from_opset`) or input `input`; nullopt when absent.
  std::optional<std::vector<int64_t>> axes(int64_t from_opset, size_t input) const {
    if (opset_ < from_opset) {
      if (!at_.has("axes")) return std::nullopt;
      return at_.ints("axes", {});
    }
    if (!has(input)) return std::nullopt;
    return ints_of(input);
  }

  Shape broadcast(const Shape& a, const Shape& b) const;
  std::vector<int64_t> broadcast_map(const Shape& in, const Shape& out) const;
  HostConstant elementwise();
  HostConstant where();
  HostConstant unary();
  HostConstant cast();
  HostConstant with_dims(const HostConstant& x, Shape dims) const;
  HostConstant reshape();
  HostConstant squeeze();
  HostConstant unsqueeze();
  HostConstant expand();
  HostConstant concat();
  HostConstant gather();
  HostConstant slice();
  HostConstant transpose();
  HostConstant range();
  HostConstant constant_of_shape();
  HostConstant reduce();
  HostConstant constant();

  const NodeProto& n_;
  const std::vector<const HostConstant*>& in_;
  int64_t opset_;
  std::string label_;
  NodeAttrs at_;
};

Shape Folder::broadcast(const Shape& a, const Shape& b) const {
  size_t r = std::max(a.size(), b.size());
  Shape out(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1)
      fail(fmt::format("shapes {} and {} do not broadcast", shape_str(a), shape_str(b)));
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// For each element of `out`, the offset of the element of `in` broadcast to it.
std::vector<int64_t> Folder::broadcast_map(const Shape& in, const Shape& out) const {
  std::vector<int64_t> map(static_cast<size_t>(numel(out)));
  auto in_st = strides_of(in);
  size_t lead = out.size() - in.size();
  std::vector<int64_t> idx(out.size(), 0);
  for (size_t k = 0; k < map.size(); ++k) {
    int64_t off = 0;
    for (size_t d = lead; d < out.size(); ++d)
      if (in[d - lead] != 1) off += idx[d] * in_st[d - lead];
    map[k] = off;
    next_index(idx, out);
  }
  return map;
}

HostConstant Folder::elementwise() {
  const std::string& op = n_.op_type();
  size_t count = static_cast<size_t>(n_.input_size());
  if (count < 1) throw Unsupported{};
  int32_t type = need(0).elem_type;
  Shape out = need(0).dims;
  for (size_t i = 1; i < count; ++i) {
    if (need(i).elem_type != type) throw Unsupported{};  // ONNX requires one type
    out = broadcast(out, need(i).dims);
  }
  static const std::set<std::string> compare = {"Equal", "Less", "Greater", "LessOrEqual",
                                                "GreaterOrEqual"};
  bool is_compare = compare.count(op) > 0;
  HostConstant r = make(is_compare ? int32_t{TensorProto::BOOL} : type, out);
  bool real = real_type(type);
  std::vector<std::vector<int64_t>> maps;
  for (size_t i = 0; i < count; ++i) maps.push_back(broadcast_map(need(i).dims, out));
  int64_t fmod = at_.i("fmod", 0);
  for (size_t k = 0; k < maps[0].size(); ++k) {
    if (real) {
      double acc = need(0).reals[static_cast<size_t>(maps[0][k])];
      for (size_t i = 1; i < count; ++i) {
        double b = need(i).reals[static_cast<size_t>(maps[i][k])];
        if (op == "Add")
          acc = acc + b;
        else if (op == "Sub")
          acc = acc - b;
        else if (op == "Mul")
          acc = acc * b;
        else if (op == "Div")
          acc = acc / b;
        else if (op == "Pow")
          acc = std::pow(acc, b);
        else if (op == "Mod" && fmod == 1)
          acc = std::fmod(acc, b);
        else if (op == "Min")
          acc = std::min(acc, b);
        else if (op == "Max")
          acc = std::max(acc, b);
        else if (op == "Equal")
          acc = acc == b;
        else if (op == "Less")
          acc = acc < b;
        else if (op == "Greater")
          acc = acc > b;
        else if (op == "LessOrEqual")
          acc = acc <= b;
        else if (op == "GreaterOrEqual")
          acc = acc >= b;
        else
          throw Unsupported{};
        if (!is_compare) acc = fit_real(acc, type);
      }
      if (is_compare)
        r.ints[k] = acc != 0;
      else
        r.reals[k] = acc;
      continue;
    }
    int64_t acc = need(0).ints[static_cast<size_t>(maps[0][k])];
    for (size_t i = 1; i < count; ++i) {
      int64_t b = need(i).ints[static_cast<size_t>(maps[i][k])];
      int64_t v = 0;
      bool overflow = false;
      if (op == "Add")
        overflow = __builtin_add_overflow(acc, b, &v);
      else if (op == "Sub")
        overflow = __builtin_sub_overflow(acc, b, &v);
      else if (op == "Mul")
        overflow = __builtin_mul_overflow(acc, b, &v);
      else if (op == "Div" || op == "Mod") {
        if (b == 0) fail(fmt::format("integer {} by zero", op == "Div" ? "division" : "modulo"));
        if (acc == std::numeric_limits<int64_t>::min() && b == -1) throw Unsupported{};
        if (op == "Div") {
          v = acc / b;  // truncation toward zero, as ONNX Runtime's integer kernels
        } else {
          v = acc % b;
          if (fmod == 0 && v != 0 && ((v < 0) != (b < 0))) v += b;  // sign of the divisor
        }
      } else if (op == "Min")
        v = std::min(acc, b);
      else if (op == "Max")
        v = std::max(acc, b);
      else if (op == "Equal")
        v = acc == b;
      else if (op == "Less")
        v = acc < b;
      else if (op == "Greater")
        v = acc > b;
      else if (op == "LessOrEqual")
        v = acc <= b;
      else if (op == "GreaterOrEqual")
        v = acc >= b;
      else if (op == "And")
        v = (acc != 0) && (b != 0);
      else if (op == "Or")
        v = (acc != 0) || (b != 0);
      else if (op == "Xor")
        v = (acc != 0) != (b != 0);
      else
        throw Unsupported{};
      if (overflow) throw Unsupported{};
      acc = is_compare ? v : fit_int(v, type);
    }
    r.ints[k] = acc;
  }
  return r;
}

HostConstant Folder::where() {
  const HostConstant &c = need(0), &x = need(1), &y = need(2);
  if (c.real() || x.elem_type != y.elem_type) throw Unsupported{};
  Shape out = broadcast(broadcast(c.dims, x.dims), y.dims);
  HostConstant r = make(x.elem_type, out);
  auto mc = broadcast_map(c.dims, out), mx = broadcast_map(x.dims, out),
       my = broadcast_map(y.dims, out);
  for (size_t k = 0; k < mc.size(); ++k) {
    bool take_x = c.ints[static_cast<size_t>(mc[k])] != 0;
    copy_elem(take_x ? x : y, take_x ? mx[k] : my[k], r, static_cast<int64_t>(k));
  }
  return r;
}

HostConstant Folder::unary() {
  const std::string& op = n_.op_type();
  const HostConstant& x = need(0);
  HostConstant r = make(x.elem_type, x.dims);
  for (size_t k = 0; k < static_cast<size_t>(x.numel()); ++k) {
    if (x.real()) {
      double v = x.reals[k];
      if (op == "Neg")
        v = -v;
      else if (op == "Abs")
        v = std::fabs(v);
      else if (op == "Floor")
        v = std::floor(v);
      else if (op == "Ceil")
        v = std::ceil(v);
      else if (op == "Sqrt")
        v = std::sqrt(v);
      else if (op == "Reciprocal")
        v = 1.0 / v;
      else
        throw Unsupported{};
      r.reals[k] = fit_real(v, x.elem_type);
    } else {
      int64_t v = x.ints[k];
      if (op == "Neg" && v != std::numeric_limits<int64_t>::min())
        v = -v;
      else if (op == "Abs" && v != std::numeric_limits<int64_t>::min())
        v = v < 0 ? -v : v;
      else if (op == "Not" && x.elem_type == TensorProto::BOOL)
        v = !v;
      else if (op != "Floor" && op != "Ceil")
        throw Unsupported{};  // integers: unchanged
      r.ints[k] = fit_int(v, x.elem_type);
    }
  }
  return r;
}

HostConstant Folder::cast() {
  const HostConstant& x = need(0);
  int32_t to = static_cast<int32_t>(at_.i("to", 0));
  if (!host_type_supported(to)) throw Unsupported{};
  HostConstant r = make(to, x.dims);
  for (size_t k = 0; k < static_cast<size_t>(x.numel()); ++k) {
    if (real_type(to)) {
      r.reals[k] = fit_real(x.real() ? x.reals[k] : static_cast<double>(x.ints[k]), to);
    } else if (x.real()) {
      double v = x.reals[k];
      if (to == TensorProto::BOOL) {
        r.ints[k] = v != 0;
        continue;
      }
      if (!std::isfinite(v) || std::fabs(v) >= 9.2e18) throw Unsupported{};
      r.ints[k] = fit_int(static_cast<int64_t>(v), to);  // truncation toward zero
    } else {
      r.ints[k] = fit_int(x.ints[k], to);
    }
  }
  return r;
}

HostConstant Folder::with_dims(const HostConstant& x, Shape dims) const {
  if (numel(dims) != x.numel())
    fail(fmt::format("cannot reshape {} to {}", shape_str(x.dims), shape_str(dims)));
  HostConstant r = x;
  r.dims = std::move(dims);
  return r;
}

HostConstant Folder::reshape() {
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

HostConstant Folder::squeeze() {
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

HostConstant Folder::unsqueeze() {
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

HostConstant Folder::expand() {
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

HostConstant Folder::concat() {
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

HostConstant Folder::gather() {
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

HostConstant Folder::slice() {
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

HostConstant Folder::transpose() {
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

HostConstant Folder::range() {
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

HostConstant Folder::constant_of_shape() {
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

HostConstant Folder::reduce() {
  const std::string& op = n_.op_type();
  const HostConstant& x = need(0);
  int64_t rank = static_cast<int64_t>(x.dims.size());
  bool from_input = op == "ReduceSum" ? opset_ >= 13 : opset_ >= 18;
  auto ax = axes(from_input ? 0 : std::numeric_limits<int64_t>::max(), 1);
  bool keep = at_.i("keepdims", 1) != 0;
  std::vector<bool> red(x.dims.size(), false);
  if (!ax || ax->empty()) {
    if (at_.i("noop_with_empty_axes", 0) != 0) return x;
    std::fill(red.begin(), red.end(), true);
  } else {
    for (int64_t a : *ax) red[axis(a, rank)] = true;
  }
  Shape out;
  for (size_t d = 0; d < x.dims.size(); ++d)
    if (!red[d] || keep) out.push_back(red[d] ? 1 : x.dims[d]);
  Shape kept = x.dims;  // the output's dims at rank `rank`
  for (size_t d = 0; d < kept.size(); ++d)
    if (red[d]) kept[d] = 1;
  HostConstant r = make(x.elem_type, out);
  std::vector<bool> touched(static_cast<size_t>(r.numel()), false);
  auto out_st = strides_of(kept);
  std::vector<int64_t> idx(x.dims.size(), 0);
  for (int64_t k = 0; k < x.numel(); ++k) {
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      if (!red[d]) o += idx[d] * out_st[d];
    size_t oi = static_cast<size_t>(o);
    bool first = !touched[oi];
    touched[oi] = true;
    if (x.real()) {
      double v = x.reals[static_cast<size_t>(k)], &acc = r.reals[oi];
      if (first)
        acc = v;
      else if (op == "ReduceProd")
        acc = fit_real(acc * v, x.elem_type);
      else if (op == "ReduceSum")
        acc = fit_real(acc + v, x.elem_type);
      else if (op == "ReduceMin")
        acc = std::min(acc, v);
      else
        acc = std::max(acc, v);
    } else {
      int64_t v = x.ints[static_cast<size_t>(k)], &acc = r.ints[oi];
      bool overflow = false;
      if (first)
        acc = v;
      else if (op == "ReduceProd")
        overflow = __builtin_mul_overflow(acc, v, &acc);
      else if (op == "ReduceSum")
        overflow = __builtin_add_overflow(acc, v, &acc);
      else if (op == "ReduceMin")
        acc = std::min(acc, v);
      else
        acc = std::max(acc, v);
      if (overflow) throw Unsupported{};
      acc = fit_int(acc, x.elem_type);
    }
    next_index(idx, x.dims);
  }
  for (size_t k = 0; k < touched.size(); ++k) {  // reductions over empty dimensions
    if (touched[k]) continue;
    if (op != "ReduceProd" && op != "ReduceSum") throw Unsupported{};
    if (x.real())
      r.reals[k] = op == "ReduceProd" ? 1.0 : 0.0;
    else
      r.ints[k] = op == "ReduceProd" ? 1 : 0;
  }
  return r;
}

HostConstant Folder::constant() {
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

std::vector<HostConstant> Folder::run() {
  const std::string& op = n_.op_type();
  if (op == "Shape") {
    const Shape& dims = need(0).dims;
    int64_t rank = static_cast<int64_t>(dims.size());
    auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
    int64_t start = clamp(at_.i("start", 0)), end = clamp(at_.i("end", rank));
    HostConstant r = make(TensorProto::INT64, {std::max<int64_t>(0, end - start)});
    for (int64_t i = start; i < end; ++i) r.ints[static_cast<size_t>(i - start)] = dims[i];
    return {r};
  }
  if (op == "Size") {
    HostConstant r = make(TensorProto::INT64, {});
    r.ints[0] = numel(need(0).dims);
    return {r};
  }
  if (op == "Constant") return {constant()};
  if (op == "Identity") return {need(0)};
  if (op == "Cast") return {cast()};
  if (op == "Where") return {where()};
  if (op == "Reshape") return {reshape()};
  if (op == "Squeeze") return {squeeze()};
  if (op == "Unsqueeze") return {unsqueeze()};
  if (op == "Flatten") {
    const HostConstant& x = need(0);
    int64_t rank = static_cast<int64_t>(x.dims.size());
    int64_t a = at_.i("axis", 1);
    if (a < -rank || a > rank) fail(fmt::format("axis {} is out of range", a));
    if (a < 0) a += rank;
    int64_t outer = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.dims[d];
    return {with_dims(x, {outer, outer ? x.numel() / outer : 0})};
  }
  if (op == "Expand") return {expand()};
  if (op == "Concat") return {concat()};
  if (op == "Gather") return {gather()};
  if (op == "Slice") return {slice()};
  if (op == "Transpose") return {transpose()};
  if (op == "Range") return {range()};
  if (op == "ConstantOfShape") return {constant_of_shape()};
  if (op.rfind("Reduce", 0) == 0) return {reduce()};
  if (op == "Neg" || op == "Abs" || op == "Not" || op == "Floor" || op == "Ceil" || op == "Sqrt" ||
      op == "Reciprocal")
    return {unary()};
  return {elementwise()};
}

}  // namespace

bool HostConstant::real() const {
  return real_type(elem_type);
}

bool host_type_supported(int32_t elem_type) {
  return real_type(elem_type) || int_type(elem_type);
}

std::optional<HostConstant> host_constant(const TensorProto& t, const std::string& what) {
  if (!host_type_supported(t.data_type()) || t.data_location() == TensorProto::EXTERNAL)
    return std::nullopt;
  HostConstant c;
  c.elem_type = t.data_type();
  c.dims = tensor_dims(t, what);
  if (c.numel() > kMaxFoldedElements) return std::nullopt;
  size_t n = static_cast<size_t>(c.numel());
  auto bad = [&] {
    return Error(fmt::format("{}: holds a different number of values than its shape {} needs", what,
                             shape_str(c.dims)));
  };
  switch (t.data_type()) {
    case TensorProto::FLOAT: {
      for (float v : tensor_floats(t, what)) c.reals.push_back(v);
      return c;
    }
    case TensorProto::INT64:
    case TensorProto::INT32:
      c.ints = tensor_ints(t, what);
      return c;
    case TensorProto::DOUBLE: {
      if (t.has_raw_data()) {
        if (t.raw_data().size() != n * sizeof(double)) throw bad();
        c.reals.resize(n);
        std::memcpy(c.reals.data(), t.raw_data().data(), n * sizeof(double));
      } else {
        c.reals.assign(t.double_data().begin(), t.double_data().end());
      }
      break;
    }
    default: {  // small integers and bool: raw bytes or int32_data
      size_t width = t.data_type() == TensorProto::UINT32 ? 4
                     : t.data_type() == TensorProto::INT16 || t.data_type() == TensorProto::UINT16
                         ? 2
                         : 1;
      if (t.has_raw_data()) {
        if (t.raw_data().size() != n * width) throw bad();
        for (size_t k = 0; k < n; ++k) {
          uint64_t bits = 0;
          std::memcpy(&bits, t.raw_data().data() + k * width, width);
          int64_t v = static_cast<int64_t>(bits);
          if (t.data_type() == TensorProto::INT16) v = static_cast<int16_t>(bits);
          if (t.data_type() == TensorProto::INT8) v = static_cast<int8_t>(bits);
          c.ints.push_back(fit_int(v, t.data_type()));
        }
      } else if (t.data_type() == TensorProto::UINT32) {
        for (uint64_t v : t.uint64_data())
          c.ints.push_back(fit_int(static_cast<int64_t>(v), TensorProto::UINT32));
      } else {
        for (int32_t v : t.int32_data()) c.ints.push_back(fit_int(v, t.data_type()));
      }
    }
  }
  if ((c.real() ? c.reals.size() : c.ints.size()) != n) throw bad();
  return c;
}

TensorProto to_tensor_proto(const HostConstant& c, const std::string& name) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(c.elem_type);
  for (int64_t d : c.dims) t.add_dims(d);
  switch (c.elem_type) {
    case TensorProto::FLOAT:
      for (double v : c.reals) t.add_float_data(static_cast<float>(v));
      break;
    case TensorProto::DOUBLE:
      for (double v : c.reals) t.add_double_data(v);
      break;
    case TensorProto::INT64:
      for (int64_t v : c.ints) t.add_int64_data(v);
      break;
    case TensorProto::UINT32:
      for (int64_t v : c.ints) t.add_uint64_data(static_cast<uint64_t>(v));
      break;
    default:  // INT32, INT16, INT8, UINT16, UINT8, BOOL are stored in int32_data
      for (int64_t v : c.ints) t.add_int32_data(static_cast<int32_t>(v));
  }
  return t;
}

bool foldable_op(const std::string& op) {
  static const std::set<std::string> ops = {"Shape",
                                            "Size",
                                            "Constant",
                                            "Identity",
                                            "Cast",
                                            "Where",
                                            "Reshape",
                                            "Squeeze",
                                            "Unsqueeze",
                                            "Flatten",
                                            "Expand",
                                            "Concat",
                                            "Gather",
                                            "Slice",
                                            "Transpose",
                                            "Range",
                                            "ConstantOfShape",
                                            "ReduceProd",
                                            "ReduceSum",
                                            "ReduceMin",
                                            "ReduceMax",
                                            "Neg",
                                            "Abs",
                                            "Not",
                                            "Floor",
                                            "Ceil",
                                            "Sqrt",
                                            "Reciprocal",
                                            "Add",
                                            "Sub",
                                            "Mul",
                                            "Div",
                                            "Mod",
                                            "Pow",
                                            "Min",
                                            "Max",
                                            "Equal",
                                            "Less",
                                            "Greater",
                                            "LessOrEqual",
                                            "GreaterOrEqual",
                                            "And",
                                            "Or",
                                            "Xor"};
  return ops.count(op) > 0;
}

std::optional<std::vector<HostConstant>> fold_node(const NodeProto& n,
                                                   const std::vector<const HostConstant*>& in,
                                                   int64_t opset) {
  try {
    return Folder(n, in, opset).run();
  } catch (const Unsupported&) {
    return std::nullopt;
  }
}

}  // namespace graphsub
