#pragma once
// Propagation of split points (TensorType::splits) through operators, as specified in
// docs/operators.md: concat records where it joined its parts, split hands each part its own
// subtree, and other operators keep the trees of axes whose meaning they preserve.
#include <span>

#include "core/tensor_type.h"

namespace graphsub {

// The tree of concat(parts...) along one axis. Parts nest to the right:
// concat(x, y, z) cuts at |x|, with x's tree on the left and (cut |y|, y, z) on the right.
SplitTreePtr concat_split_tree(std::span<const SplitTreePtr> part_trees,
                               std::span<const int64_t> part_sizes);

// The tree of the range [lo, hi) of an axis of length `len` whose tree is `t`: `t` for the
// whole range, the matching subtree for a range that is exactly one side of a recorded cut (or
// lies inside one side), null for a range that straddles a cut.
SplitTreePtr split_subtree(const SplitTreePtr& t, int64_t len, int64_t lo, int64_t hi);

// Keeps on `out` only the trees on which every input agrees (axis by axis, same ranks).
void keep_common_splits(TensorType& out, std::span<const TensorType> ins);

// Drops the per-axis vector when it holds no tree, so equal types compare and print alike.
void tidy_splits(TensorType& t);

}  // namespace graphsub
