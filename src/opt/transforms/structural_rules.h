#pragma once
// The structural rules TASO added by hand beside its generated ones. Each is checked: the
// ones the axioms can express also appear in rules/structural.rules, which the verifier
// proves; all are tested numerically on random inputs (tests/test_opt_structural.cpp).
//   fuse-activation-conv     relu/sigmoid/tanh(conv(x, w))   -> conv(x, w, act)
//   fuse-activation-matmul   relu/sigmoid/tanh(matmul(x, w)) -> matmul(x, w, act)
//   fold-batchnorm           batchnorm(conv(x, w [, b]))     -> conv(x, w', b')
//   merge-convs              conv(x, w1), conv(x, w2) on one input, kernels of any sizes
//                            -> split(conv(x, concat(enlarge(w1), enlarge(w2))))
//   merge-group-convs        conv with g groups -> conv with g/2 groups (block-diagonal weight)
//   concat-of-split          concat(split(x)) of all parts in order -> x
//   fuse-conv-add            ewadd(conv(x, w), y) [-> act]   -> conv_add(x, w, y, act)
//   merge-duplicates         op(x..), op(x..) with equal attributes -> one op(x..) read by both
// The new weight expressions (enlarge, concat, the folded scale) read only weights, so they
// cost nothing and are computed ahead of run time (exec/precompute.h).
#include <memory>
#include <vector>

#include "opt/transforms/transform.h"

namespace graphsub::opt {

std::unique_ptr<Transform> make_fuse_activation(const std::string& into);  // "conv" | "matmul"
std::unique_ptr<Transform> make_fold_batchnorm();
std::unique_ptr<Transform> make_merge_convs();
std::unique_ptr<Transform> make_merge_group_convs();
std::unique_ptr<Transform> make_concat_of_split();
std::unique_ptr<Transform> make_fuse_conv_add();
std::unique_ptr<Transform> make_merge_duplicates();

// All of the above, in the order listed.
std::vector<std::unique_ptr<Transform>> structural_transforms();

}  // namespace graphsub::opt
