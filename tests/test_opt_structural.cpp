// The built-in structural rules, each checked numerically on random inputs (before and after
// weight pre-computation), plus the cases each must refuse.
#include <gtest/gtest.h>

#include "check/equivalence.h"
#include "exec/precompute.h"
#include "ir/builder.h"
#include "onnx/onnx_model.h"
#include "opt/match/graph_index.h"
#include "opt/transforms/rewrite.h"
#include "opt/transforms/structural_rules.h"

namespace graphsub::opt {
namespace {

std::vector<Candidate> apply(const Transform& t, const Graph& g) {
  GraphIndex ix(g);
  std::vector<Candidate> out;
  apply_everywhere(t, ix, [&](Candidate&& c) { out.push_back(std::move(c)); });
  return out;
}

size_t count_op(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (NodeId id = 0; id < g.num_slots(); ++id) n += g.alive(id) && g.node(id).op->name == op;
  return n;
}

// The candidate is valid, equal to the original on random inputs, and still equal once its
// weight expressions are pre-computed (which must leave none of them behind).
void expect_equivalent(const Graph& original, const Graph& candidate) {
  ASSERT_NO_THROW(validate(candidate));
  ASSERT_TRUE(acyclic(candidate));
  auto c = check_equivalent(original, candidate, {.seed = 5});
  EXPECT_TRUE(c.ok) << c.failure();
  Graph folded = candidate;
  precompute_weights(folded);
  ASSERT_NO_THROW(validate(folded));
  auto flags = constant_nodes(folded);
  for (NodeId id = 0; id < folded.num_slots(); ++id) {
    if (folded.alive(id) && !folded.node(id).is_source()) {
      EXPECT_FALSE(flags[id]) << folded.describe(id);
    }
  }
  auto f = check_equivalent(original, folded, {.seed = 6});
  EXPECT_TRUE(f.ok) << f.failure();
}

Attrs conv_attrs(int64_t stride, std::vector<int64_t> pads, const std::string& act = "none") {
  return {
      {"stride", std::vector<int64_t>{stride, stride}}, {"pads", std::move(pads)}, {"act", act}};
}

TEST(OptStructural, FusesEachActivationIntoConvAndMatmul) {
  for (const std::string& act : fused_activations()) {
    GraphBuilder b;
    auto x = b.input("x", {1, 3, 6, 6});
    auto c = b.conv(x, b.weight("w", {4, 3, 3, 3}), {.pad = 1});
    b.output("y", b.op(act, {c}));
    auto m = b.matmul(b.input("v", {2, 5}), b.weight("m", {5, 3}));
    b.output("z", b.op(act, {m}));
    Graph g = b.finish();
    for (const char* into : {"conv", "matmul"}) {
      auto cands = apply(*make_fuse_activation(into), g);
      ASSERT_EQ(cands.size(), 1u) << act << " into " << into;
      EXPECT_EQ(count_op(cands[0].graph, act), 1u);
      expect_equivalent(g, cands[0].graph);
    }
  }
}

TEST(OptStructural, FusionRefusesSharedOutputsAndExistingActivations) {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 4, 4});
  auto c = b.conv(x, b.weight("w", {2, 2, 1, 1}));
  b.output("a", b.relu(c));
  b.output("b", b.tanh(c));  // the conv output has another reader
  auto d = b.conv(x, b.weight("v", {2, 2, 1, 1}), {.act = "relu"});
  b.output("c", b.sigmoid(d));  // already has an activation
  EXPECT_TRUE(apply(*make_fuse_activation("conv"), b.finish()).empty());
}

TEST(OptStructural, FoldsBatchnormIntoConvWithAndWithoutBias) {
  for (bool bias : {false, true}) {
    GraphBuilder b;
    auto x = b.input("x", {1, 3, 5, 5});
    std::vector<TensorRef> ins = {x, b.weight("w", {4, 3, 3, 3})};
    if (bias) ins.push_back(b.weight("bias", {4}));
    auto c = b.op("conv", ins, conv_attrs(2, {1, 1, 1, 1}));
    b.output("y", b.relu(b.batchnorm(c, "bn")));
    Graph g = b.finish();
    auto cands = apply(*make_fold_batchnorm(), g);
    ASSERT_EQ(cands.size(), 1u);
    EXPECT_EQ(count_op(cands[0].graph, "batchnorm"), 0u);
    expect_equivalent(g, cands[0].graph);
    Graph folded = cands[0].graph;
    precompute_weights(folded);
    EXPECT_EQ(count_op(folded, "conv"), 1u);
    EXPECT_EQ(folded.num_ops(), 2u);  // conv and relu remain
  }
}

TEST(OptStructural, BatchnormAfterAnActivationIsNotFolded) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 5, 5});
  auto c = b.conv(x, b.weight("w", {4, 3, 3, 3}), {.pad = 1, .act = "relu"});
  b.output("y", b.batchnorm(c, "bn"));
  EXPECT_TRUE(apply(*make_fold_batchnorm(), b.finish()).empty());
}

TEST(OptStructural, MergesConvsOfDifferentKernelSizesOnOneInput) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 7, 7});
  auto a = b.conv(x, b.weight("a", {3, 4, 1, 1}), {.act = "relu"});
  auto c = b.conv(x, b.weight("c", {5, 4, 3, 3}), {.pad = 1, .act = "relu"});
  b.output("y", b.concat(1, {a, c}));
  Graph g = b.finish();
  auto cands = apply(*make_merge_convs(), g);
  ASSERT_EQ(cands.size(), 1u);
  const Graph& r = cands[0].graph;
  EXPECT_EQ(count_op(r, "conv"), 1u);
  EXPECT_EQ(count_op(r, "enlarge"), 1u);
  EXPECT_EQ(count_op(r, "split"), 1u);
  expect_equivalent(g, r);
  // The concat of the two halves of the split is the merged conv itself.
  auto again = apply(*make_concat_of_split(), r);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(count_op(again[0].graph, "split"), 0u);
  EXPECT_EQ(count_op(again[0].graph, "concat"), 1u);  // only the weight concat is left
  expect_equivalent(g, again[0].graph);
}

TEST(OptStructural, MergesAsymmetricKernelsAndConvsWithBias) {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 6, 6});
  auto a = b.op("conv", {x, b.weight("a", {2, 2, 1, 3}), b.weight("ab", {2})},
                conv_attrs(1, {0, 1, 0, 1}));
  auto c = b.op("conv", {x, b.weight("c", {3, 2, 3, 1}), b.weight("cb", {3})},
                conv_attrs(1, {1, 0, 1, 0}));
  b.output("a", a);
  b.output("c", c);
  Graph g = b.finish();
  auto cands = apply(*make_merge_convs(), g);
  ASSERT_EQ(cands.size(), 1u);
  EXPECT_EQ(count_op(cands[0].graph, "enlarge"), 2u);  // both grow to 3x3
  expect_equivalent(g, cands[0].graph);
}

TEST(OptStructural, MergeConvsRefusesIncompatiblePairs) {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 6, 6});
  b.output("s1", b.conv(x, b.weight("a", {2, 2, 3, 3}), {.stride = 1, .pad = 1}));
  b.output("s2", b.conv(x, b.weight("b", {2, 2, 3, 3}), {.stride = 2, .pad = 1}));  // stride
  b.output("act", b.conv(x, b.weight("c", {2, 2, 1, 1}), {.act = "relu"}));         // act
  b.output("pad", b.conv(x, b.weight("d", {2, 2, 3, 3}), {.pad = 0}));              // not centred
  b.output("grp", b.conv(x, b.weight("e", {2, 1, 3, 3}), {.pad = 1}));              // grouped
  EXPECT_TRUE(apply(*make_merge_convs(), b.finish()).empty());
}

TEST(OptStructural, MergesGroupConvsIntoHalfAsManyGroups) {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 5, 5});
  auto c = b.op("conv", {x, b.weight("w", {12, 2, 3, 3}), b.weight("bias", {12})},
                conv_attrs(2, {1, 1, 1, 1}, "relu"));  // 4 groups
  b.output("y", c);
  Graph g = b.finish();
  auto cands = apply(*make_merge_group_convs(), g);
  ASSERT_EQ(cands.size(), 1u);
  const Graph& r = cands[0].graph;
  NodeId conv = 0;
  for (NodeId id = 0; id < r.num_slots(); ++id)
    if (r.alive(id) && r.node(id).op->name == "conv") conv = id;
  EXPECT_EQ(r.type(r.node(conv).inputs[1]).shape, (Shape{12, 4, 3, 3}));  // 2 groups
  expect_equivalent(g, r);
  auto twice = apply(*make_merge_group_convs(), r);  // 2 -> 1 group: a dense conv
  ASSERT_EQ(twice.size(), 1u);
  expect_equivalent(g, twice[0].graph);
  EXPECT_TRUE(apply(*make_merge_group_convs(), twice[0].graph).empty());
}

TEST(OptStructural, GroupConvsWithOddGroupCountsStay) {
  GraphBuilder b;
  auto x = b.input("x", {1, 6, 4, 4});
  b.output("y", b.conv(x, b.weight("w", {6, 2, 1, 1})));  // 3 groups
  EXPECT_TRUE(apply(*make_merge_group_convs(), b.finish()).empty());
}

TEST(OptStructural, ConcatOfSplitNeedsAllPartsInOrder) {
  GraphBuilder b;
  auto x = b.concat(1, {b.input("a", {2, 2}), b.relu(b.input("c", {2, 4}))});
  auto parts = b.op_multi("split", {x}, {{"axis", int64_t{1}}});
  b.output("same", b.tanh(b.concat(1, {parts[0], parts[1]})));
  b.output("swapped", b.concat(1, {parts[1], parts[0]}));
  Graph g = b.finish();
  auto cands = apply(*make_concat_of_split(), g);
  ASSERT_EQ(cands.size(), 1u);
  EXPECT_EQ(count_op(cands[0].graph, "concat"), 2u);  // x's own concat and the swapped one
  expect_equivalent(g, cands[0].graph);
}

TEST(OptStructural, ConcatOfSplitKeepsSplitPointsExact) {
  // x has no recorded cut; concat(split(x)) records one, so it is not the same tensor type.
  GraphBuilder b;
  auto x = b.input("x", {2, 6});
  auto parts =
      b.op_multi("split", {x}, {{"axis", int64_t{1}}, {"sizes", std::vector<int64_t>{2, 4}}});
  b.output("y", b.concat(1, {parts[0], parts[1]}));
  EXPECT_TRUE(apply(*make_concat_of_split(), b.finish()).empty());
}

// fuse-conv-add: one application fuses every residual addition of a conv's output, with the
// activation that alone reads the sum, into conv_add (a residual chained through two sites,
// a conv with a bias, a conv as the second operand, a same-shape `add`).
Graph residual_chain() {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 6, 6});
  auto s = b.relu(b.ewadd(b.conv(x, b.weight("w1", {4, 4, 3, 3}), {.pad = 1}), x));
  auto c2 = b.op("conv", {s, b.weight("w2", {4, 4, 1, 1}), b.weight("b2", {4})},
                 conv_attrs(1, {0, 0, 0, 0}));
  auto t = b.ewadd(b.tanh(s), c2);
  b.output("y", b.sigmoid(b.op("add", {b.conv(t, b.weight("w3", {4, 4, 3, 3}), {.pad = 1}), t})));
  return b.finish();
}

TEST(OptStructural, FusesEveryResidualAdditionIntoItsConvolution) {
  Graph g = residual_chain();
  auto cands = apply(*make_fuse_conv_add(), g);
  ASSERT_EQ(cands.size(), 1u);
  const Graph& f = cands[0].graph;
  EXPECT_EQ(count_op(f, "conv_add"), 3u);
  EXPECT_EQ(count_op(f, "conv"), 0u);
  for (const char* gone : {"ewadd", "add", "relu", "sigmoid"})
    EXPECT_EQ(count_op(f, gone), 0u) << gone;
  EXPECT_EQ(count_op(f, "tanh"), 1u);  // reads s, not a sum
  EXPECT_NE(cands[0].where.find("and 2 more"), std::string::npos) << cands[0].where;
  expect_equivalent(g, f);
  // Nothing is left to fuse, and the fused graph exports to ONNX (Conv, Add, activation) and
  // reads back as an equivalent graph.
  EXPECT_TRUE(apply(*make_fuse_conv_add(), f).empty());
  Graph back = import_onnx_bytes(export_onnx_bytes(f, nullptr), "").graph;
  EXPECT_EQ(count_op(back, "conv"), 3u);
  auto c = check_equivalent(g, back, {.seed = 4});
  EXPECT_TRUE(c.ok) << c.failure();
}

TEST(OptStructural, ConvAddFusionRefusesSharedOrActivatedConvs) {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 4, 4});
  auto w = [&](const char* name) { return b.weight(name, {2, 2, 1, 1}); };
  auto shared = b.conv(x, w("a"));
  b.output("p", b.ewadd(shared, x));
  b.output("q", shared);  // the conv output is read elsewhere too
  b.output("r", b.ewadd(b.conv(x, w("c"), {.act = "relu"}), x));  // activation before the add
  auto twice = b.conv(x, w("d"));
  b.output("s", b.ewadd(twice, twice));  // the residual is the conv itself
  b.output("t", b.op("add", {b.conv(x, w("e")), b.input("v", {1, 2, 1, 1})}));  // broadcasts
  b.output("u", b.ewadd(b.conv(b.weight("k", {1, 2, 4, 4}), w("f")), x));       // weights only
  EXPECT_TRUE(apply(*make_fuse_conv_add(), b.finish()).empty());
}

TEST(OptStructural, ConvAddFusionLeavesAnActivationWhoseSumIsReadElsewhere) {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 4, 4});
  auto sum = b.ewadd(x, b.conv(x, b.weight("w", {2, 2, 1, 1})));
  b.output("y", b.relu(sum));
  b.output("z", b.tanh(sum));
  Graph g = b.finish();
  auto cands = apply(*make_fuse_conv_add(), g);
  ASSERT_EQ(cands.size(), 1u);
  const Graph& f = cands[0].graph;
  EXPECT_EQ(count_op(f, "conv_add"), 1u);
  EXPECT_EQ(count_op(f, "relu"), 1u);
  for (NodeId id = 0; id < f.num_slots(); ++id) {
    if (f.alive(id) && f.node(id).op->name == "conv_add") {
      EXPECT_EQ(f.node(id).attrs.s("act"), "none");
    }
  }
  expect_equivalent(g, f);
}

// merge-duplicates: one application merges every operator equal to an earlier one (same
// operator, attributes and inputs), following chains, and keeps both graph outputs; equal
// operators with other attributes or other inputs stay.
TEST(OptStructural, MergesDuplicateOperatorsAndTheirChains) {
  GraphBuilder b;
  auto x = b.input("x", {2, 4});
  auto w = b.weight("w", {4, 4}), w2 = b.weight("w2", {4, 4});
  auto a1 = b.matmul(x, w), a2 = b.matmul(x, w), other = b.matmul(x, w2);
  b.output("y", b.ewadd(b.relu(a1), b.relu(a2)));  // relu(a2) is a duplicate once a2 is a1
  b.output("z", b.tanh(a2));
  b.output("d", b.relu(x));
  b.output("e", b.relu(x));  // two outputs of equal values, both kept
  b.output("c0", b.concat(0, {other, x}));
  b.output("c1", b.concat(1, {other, x}));
  Graph g = b.finish();
  auto cands = apply(*make_merge_duplicates(), g);
  ASSERT_EQ(cands.size(), 1u);
  const Graph& m = cands[0].graph;
  EXPECT_EQ(count_op(m, "matmul"), 2u);  // x.w once, x.w2
  EXPECT_EQ(count_op(m, "relu"), 2u);    // relu(x.w), relu(x)
  EXPECT_EQ(count_op(m, "concat"), 2u);  // axes differ: not merged
  EXPECT_EQ(m.outputs().size(), g.outputs().size());
  EXPECT_EQ(cands[0].where, "3 duplicate operators (matmul x1, relu x2)");
  expect_equivalent(g, m);
  // Nothing left to merge.
  EXPECT_TRUE(apply(*make_merge_duplicates(), m).empty());
}

TEST(OptStructural, PrecomputeFoldsWeightExpressionsOnly) {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 5, 5});
  auto w = b.op("concat",
                {b.weight("a", {2, 2, 3, 3}), b.op("enlarge", {b.weight("c", {1, 2, 1, 1})},
                                                   {{"kernel", std::vector<int64_t>{3, 3}}})},
                {{"axis", int64_t{0}}});
  b.output("y", b.relu(b.conv(x, w, {.pad = 1})));
  Graph g = b.finish();
  Graph f = g;
  EXPECT_EQ(precompute_weights(f), 2u);  // enlarge and concat
  EXPECT_EQ(f.num_ops(), 2u);
  EXPECT_TRUE(check_equivalent(g, f, {.seed = 9}).ok);
}

}  // namespace
}  // namespace graphsub::opt
