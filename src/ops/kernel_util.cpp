#include "ops/kernel_util.h"

namespace graphsub {

Act parse_act(const std::string& s) {
  if (s == "none") return Act::None;
  if (s == "relu") return Act::Relu;
  if (s == "sigmoid") return Act::Sigmoid;
  if (s == "tanh") return Act::Tanh;
  throw Error(fmt::format("unknown activation '{}'", s));
}

int64_t norm_axis(const char* op, int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw Error(fmt::format("{}: axis {} out of range for rank {}", op, axis, rank));
  return a;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1)
      throw Error(fmt::format("{}: shapes {} and {} do not broadcast", op, shape_str(a), shape_str(b)));
    out[i] = x == 1 ? y : x;
  }
  return out;
}

OpCost streaming_cost(std::span<const TensorType> in, std::span<const TensorType> out,
                      double per_elem) {
  OpCost c;
  for (auto& t : in) c.bytes += static_cast<double>(t.numel() * dtype_size(t.dtype));
  for (auto& t : out) {
    c.bytes += static_cast<double>(t.numel() * dtype_size(t.dtype));
    c.flops += per_elem * static_cast<double>(t.numel());
  }
  return c;
}

}  // namespace graphsub
