#pragma once
// Element type, layout, shape and split-point metadata of one tensor.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace graphsub {

enum class DType : uint8_t { F32, F16, I64, I32, U32, Bool };
// Physical layout. The logical shape is always in the canonical order (NCHW for images,
// row-major matrices); the layout tells how a kernel stores it.
enum class Layout : uint8_t { Default, NHWC, ColMajor };

const char* dtype_name(DType t);
const char* layout_name(Layout l);
size_t dtype_size(DType t);

using Shape = std::vector<int64_t>;

// The largest element count graphsub represents: 2^60, so that the byte size of any tensor
// (at most 8 bytes an element) and sums of a few such sizes still fit in int64.
inline constexpr int64_t kMaxElements = int64_t{1} << 60;

// a * b for sizes and counts (a, b >= 0); nullopt when the product exceeds kMaxElements.
std::optional<int64_t> checked_mul(int64_t a, int64_t b);
// a + b for sizes (a, b >= 0); nullopt when the sum exceeds kMaxElements.
std::optional<int64_t> checked_add(int64_t a, int64_t b);
// Element count, or nullopt when the product of the dimensions (zero dimensions counted as
// one, so that every partial product a kernel forms also fits) exceeds kMaxElements.
std::optional<int64_t> checked_numel(const Shape& s);
// Element count; throws Error naming the shape when checked_numel fails.
int64_t numel(const Shape& s);
std::string shape_str(const Shape& s);

// Where a concat joined its parts, per axis. A tensor built by concat(a, x, y) has a cut
// at |x| along axis a; nested concats on the same axis give a tree. split0/split1 cut
// exactly there, which is what makes "split(concat(x, y)) = x" a valid rule.
struct SplitTree {
  int64_t cut = 0;
  std::shared_ptr<const SplitTree> left, right;  // trees of the two parts (may be null)
};
using SplitTreePtr = std::shared_ptr<const SplitTree>;
bool split_tree_equal(const SplitTreePtr& a, const SplitTreePtr& b);
std::string split_tree_str(const SplitTreePtr& t);

struct TensorType {
  DType dtype = DType::F32;
  Layout layout = Layout::Default;
  Shape shape;
  std::vector<SplitTreePtr> splits;  // empty, or one (possibly null) entry per axis

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return graphsub::numel(shape); }
  SplitTreePtr split(size_t axis) const { return axis < splits.size() ? splits[axis] : nullptr; }
  void set_split(size_t axis, SplitTreePtr t);
  bool has_splits() const;
  std::string str() const;  // "f32[2,4]"
};

bool operator==(const TensorType& a, const TensorType& b);
inline bool operator!=(const TensorType& a, const TensorType& b) { return !(a == b); }

}  // namespace graphsub
