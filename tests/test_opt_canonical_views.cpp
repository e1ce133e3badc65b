// Chains of reshapes and transposes written in the rule language (opt/transforms/
// canonical_views.h): torch's sequence-first heads, at a batch of two and of one, become
// splits, one permutation and merges, the same data in the same places; chains the language
// reads already, or that another node reads inside, are left as they are; reshapes that follow
// each other are joined after the search.
#include <gtest/gtest.h>

#include <map>

#include "check/equivalence.h"
#include "ir/builder.h"
#include "ir/hash.h"
#include "opt/transforms/canonical_views.h"

namespace graphsub {
namespace {

struct ViewOps {
  std::vector<std::vector<int64_t>> perms;  // of the transposes, in graph order
  std::vector<Shape> reshapes;              // output shapes of the reshapes
};

ViewOps view_ops(const Graph& g) {
  ViewOps v;
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    if (n.is_source()) continue;
    if (n.op->name == "transpose") v.perms.push_back(n.attrs.ints("perm"));
    if (n.op->name == "reshape") v.reshapes.push_back(n.outputs[0].shape);
  }
  return v;
}

void expect_same_outputs(const Graph& a, const Graph& b) {
  auto r = check_equivalent(a, b, {.seed = 3});
  EXPECT_TRUE(r.ok) << r.failure();
}

// [S, B, E] -> [S, B*H, D] -> [B*H, S, D] -> [B, H, S, D], as torch writes each of q, k, v.
TEST(OptCanonicalViews, TorchSequenceFirstHeadsBecomeOneSplitAndOnePermutation) {
  for (int64_t batch : {2, 1}) {
    GraphBuilder b;
    const int64_t seq = 3, heads = 2, d = 4;
    auto x = b.input("x", {seq, batch, heads * d});
    auto r = b.reshape(x, {seq, batch * heads, d});
    auto t = b.transpose(r, {1, 0, 2});
    b.output("y", b.relu(b.reshape(t, {batch, heads, seq, d})));
    Graph g = b.finish();
    Graph c = g;
    EXPECT_EQ(opt::canonicalize_views(c), 1u) << batch;
    ViewOps v = view_ops(c);
    ASSERT_EQ(v.reshapes.size(), 1u) << batch;
    EXPECT_EQ(v.reshapes[0], (Shape{seq, batch, heads, d})) << batch;
    ASSERT_EQ(v.perms.size(), 1u) << batch;
    EXPECT_EQ(v.perms[0], (std::vector<int64_t>{1, 2, 0, 3})) << batch;
    expect_same_outputs(g, c);
  }
}

// [B, H, S, D] -> [S, B, H, D] -> [S*B, E], the heads merged back before the output projection.
TEST(OptCanonicalViews, HeadsMergedBackBecomeAPermutationAndTwoMerges) {
  for (int64_t batch : {2, 1}) {
    GraphBuilder b;
    const int64_t seq = 3, heads = 2, d = 4;
    auto x = b.input("x", {batch, heads, seq, d});
    auto t = b.transpose(x, {2, 0, 1, 3});
    b.output("y", b.relu(b.reshape(t, {seq * batch, heads * d})));
    Graph g = b.finish();
    Graph c = g;
    EXPECT_EQ(opt::canonicalize_views(c), 1u) << batch;
    ViewOps v = view_ops(c);
    ASSERT_EQ(v.perms.size(), 1u);
    EXPECT_EQ(v.perms[0], (std::vector<int64_t>{2, 0, 1, 3})) << batch;
    ASSERT_EQ(v.reshapes.size(), 2u);
    EXPECT_EQ(v.reshapes[0], (Shape{seq, batch, heads * d})) << batch;
    EXPECT_EQ(v.reshapes[1], (Shape{seq * batch, heads * d})) << batch;
    expect_same_outputs(g, c);
  }
}

// Hugging Face's heads (a split, then the middle axes swapped) are in the language already; a
// chain with a reshape outside it but no transpose gains nothing; a chain read in its middle
// is two chains. None is rewritten.
TEST(OptCanonicalViews, ChainsTheLanguageReadsOrThatOthersReadInsideStay) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 8});
  b.output("hf", b.relu(b.transpose(b.reshape(x, {2, 3, 2, 4}), {0, 2, 1, 3})));
  b.output("lone", b.relu(b.reshape(x, {3, 2, 8})));
  auto shared = b.reshape(x, {3, 4, 4});
  b.output("inside", b.relu(shared));
  b.output("after", b.relu(b.transpose(shared, {1, 0, 2})));
  Graph g = b.finish();
  Graph c = g;
  EXPECT_EQ(opt::canonicalize_views(c), 0u);
  EXPECT_EQ(structural_hash(c), structural_hash(g));
}

TEST(OptCanonicalViews, ReshapesThatFollowEachOtherAreJoined) {
  GraphBuilder b;
  auto x = b.input("x", {3, 2, 8});
  auto split = b.reshape(x, {3, 2, 2, 4});
  b.output("back", b.relu(b.reshape(split, {3, 2, 8})));  // gives x's shape: both go
  auto y = b.input("y", {3, 2, 8});
  b.output("joined", b.relu(b.reshape(b.reshape(y, {6, 8}), {6, 2, 4})));  // one is left
  auto z = b.input("z", {3, 2, 8});
  auto read_twice = b.reshape(z, {6, 8});
  b.output("kept", b.relu(b.reshape(read_twice, {48})));
  b.output("kept2", b.relu(read_twice));
  Graph g = b.finish();
  Graph c = g;
  EXPECT_EQ(opt::collapse_reshapes(c), 3u);
  ViewOps v = view_ops(c);
  ASSERT_EQ(v.reshapes.size(), 3u);  // y's one, z's two (its first has another reader)
  expect_same_outputs(g, c);
}

}  // namespace
}  // namespace graphsub
