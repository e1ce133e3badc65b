#include "ops/split_trees.h"

#include <memory>

namespace graphsub {

SplitTreePtr concat_split_tree(std::span<const SplitTreePtr> part_trees,
                               std::span<const int64_t> part_sizes) {
  if (part_trees.empty()) return nullptr;
  if (part_trees.size() == 1) return part_trees[0];
  auto node = std::make_shared<SplitTree>();
  node->cut = part_sizes[0];
  node->left = part_trees[0];
  node->right = concat_split_tree(part_trees.subspan(1), part_sizes.subspan(1));
  return node;
}

SplitTreePtr split_subtree(const SplitTreePtr& t, int64_t len, int64_t lo, int64_t hi) {
  if (lo == 0 && hi == len) return t;
  if (!t) return nullptr;
  if (hi <= t->cut) return split_subtree(t->left, t->cut, lo, hi);
  if (lo >= t->cut) return split_subtree(t->right, len - t->cut, lo - t->cut, hi - t->cut);
  return nullptr;
}

void keep_common_splits(TensorType& out, std::span<const TensorType> ins) {
  for (size_t a = 0; a < out.splits.size(); ++a)
    for (const TensorType& in : ins)
      if (!split_tree_equal(out.splits[a], in.split(a))) out.splits[a] = nullptr;
  tidy_splits(out);
}

void tidy_splits(TensorType& t) {
  if (!t.has_splits()) t.splits.clear();
}

}  // namespace graphsub
