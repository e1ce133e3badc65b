// Elementwise operators, Where, Cast and reductions: broadcasting as ONNX defines it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <set>

#include "onnx/evaluate/node_evaluator.h"

namespace graphsub::evaluate {

Shape NodeEvaluator::broadcast(const Shape& a, const Shape& b) const {
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
std::vector<int64_t> NodeEvaluator::broadcast_map(const Shape& in, const Shape& out) const {
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

HostConstant NodeEvaluator::elementwise() {
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

HostConstant NodeEvaluator::where() {
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

HostConstant NodeEvaluator::unary() {
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

HostConstant NodeEvaluator::cast() {
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

HostConstant NodeEvaluator::reduce() {
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

}  // namespace graphsub::evaluate
