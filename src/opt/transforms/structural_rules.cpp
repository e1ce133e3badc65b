#include "opt/transforms/structural_rules.h"

#include <algorithm>

#include "ops/op_def.h"
#include "opt/transforms/builtin_transform.h"

namespace graphsub::opt {

bool is_fusable_activation(const std::string& op) {
  const auto& acts = fused_activations();
  return std::find(acts.begin(), acts.end(), op) != acts.end();
}

ConvShape conv_shape(const Graph& g, NodeId conv) {
  const Node& n = g.node(conv);
  const Shape& x = g.type(n.inputs[0]).shape;
  const Shape& w = g.type(n.inputs[1]).shape;
  return {.groups = x[1] / w[1], .kh = w[2], .kw = w[3], .has_bias = n.inputs.size() > 2};
}

std::vector<std::unique_ptr<Transform>> structural_transforms() {
  std::vector<std::unique_ptr<Transform>> t;
  t.push_back(make_fuse_activation("conv"));
  t.push_back(make_fuse_activation("matmul"));
  t.push_back(make_fold_batchnorm());
  t.push_back(make_merge_convs());
  t.push_back(make_merge_group_convs());
  t.push_back(make_concat_of_split());
  t.push_back(make_fuse_conv_add());
  t.push_back(make_merge_duplicates());
  return t;
}

}  // namespace graphsub::opt
