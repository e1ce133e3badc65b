#include "core/tensor_type.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "core/error.h"

namespace graphsub {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32:
      return "f32";
    case DType::F16:
      return "f16";
    case DType::I64:
      return "i64";
    case DType::I32:
      return "i32";
    case DType::U32:
      return "u32";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Default:
      return "default";
    case Layout::NHWC:
      return "nhwc";
    case Layout::ColMajor:
      return "colmajor";
  }
  return "?";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F16:
      return 2;
    case DType::I64:
      return 8;
    case DType::Bool:
      return 1;
    default:
      return 4;
  }
}

std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) || r > kMaxElements) return std::nullopt;
  return r;
}

std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  if (a < 0 || b < 0 || a > kMaxElements - b) return std::nullopt;
  return a + b;
}

std::optional<int64_t> checked_numel(const Shape& s) {
  int64_t bound = 1, n = 1;
  for (int64_t d : s) {
    // Negative dimensions (a reshape's -1 before it is resolved) keep their sign.
    int64_t mag = d < 0 ? (d == INT64_MIN ? kMaxElements + 1 : -d) : d;
    auto b = checked_mul(bound, std::max<int64_t>(mag, 1));
    if (!b) return std::nullopt;
    bound = *b;
    n *= d;  // |n| <= bound: cannot overflow
  }
  return n;
}

int64_t numel(const Shape& s) {
  auto n = checked_numel(s);
  if (!n)
    throw Error(
        fmt::format("shape {} has more than 2^60 elements (graphsub's limit)", shape_str(s)));
  return *n;
}

std::string shape_str(const Shape& s) {
  return fmt::format("[{}]", fmt::join(s, ","));
}

bool split_tree_equal(const SplitTreePtr& a, const SplitTreePtr& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return a->cut == b->cut && split_tree_equal(a->left, b->left) &&
         split_tree_equal(a->right, b->right);
}

std::string split_tree_str(const SplitTreePtr& t) {
  if (!t) return "";
  if (!t->left && !t->right) return fmt::format("{}", t->cut);
  return fmt::format("({} {} {})", split_tree_str(t->left), t->cut, split_tree_str(t->right));
}

void TensorType::set_split(size_t axis, SplitTreePtr t) {
  if (!t && axis >= splits.size()) return;
  if (splits.size() < shape.size()) splits.resize(shape.size());
  splits[axis] = std::move(t);
}

bool TensorType::has_splits() const {
  for (auto& s : splits)
    if (s) return true;
  return false;
}

std::string TensorType::str() const {
  std::string s = fmt::format("{}{}", dtype_name(dtype), shape_str(shape));
  if (layout != Layout::Default) s += fmt::format("@{}", layout_name(layout));
  for (size_t a = 0; a < splits.size(); ++a)
    if (splits[a]) s += fmt::format("{{split{}:{}}}", a, split_tree_str(splits[a]));
  return s;
}

bool operator==(const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype || a.layout != b.layout || a.shape != b.shape) return false;
  size_t n = std::max(a.splits.size(), b.splits.size());
  for (size_t i = 0; i < n; ++i)
    if (!split_tree_equal(a.split(i), b.split(i))) return false;
  return true;
}

}  // namespace graphsub
