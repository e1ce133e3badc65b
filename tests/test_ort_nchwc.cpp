// ONNX Runtime's blocked layout as predicted (ort/nchwc_layout.h) and the channel padding that
// extends it (ort/nchwc_padding.h): the conditions, the reorders counted on small graphs, and
// padded graphs that compute what the original computes. tests/python/test_nchwc_layout.py
// compares the predictions with what ONNX Runtime itself writes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "check/equivalence.h"
#include "exec/precompute.h"
#include "ir/builder.h"
#include "ort/nchwc_layout.h"
#include "ort/nchwc_padding.h"

namespace graphsub::ort {
namespace {

constexpr int kBlock = 16;

size_t count_op(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (NodeId id = 0; id < g.num_slots(); ++id) n += g.alive(id) && g.node(id).op->name == op;
  return n;
}

// The padded graph computes what `original` does, as built (its weights padded by operators)
// and with those operators folded into the weights, as the file is written.
void expect_same_before_and_after_folding(const Graph& original, const Graph& padded) {
  auto c = check_equivalent(original, padded, {.seed = 3});
  EXPECT_TRUE(c.ok) << c.failure();
  Graph folded = padded;
  precompute_weights(folded);
  auto f = check_equivalent(original, folded, {.seed = 4});
  EXPECT_TRUE(f.ok) << f.failure();
}

TEST(OrtNchwc, ConvConditionsFollowTheRuntime) {
  // Ungrouped: fewer input channels than a block read the plain tensor; more must be a
  // multiple of 4; the output channels are padded by the runtime, any count runs.
  EXPECT_TRUE(nchwc_conv_fit(32, 3, 1, kBlock).blocked);
  EXPECT_FALSE(nchwc_conv_fit(32, 3, 1, kBlock).reads_blocked);
  EXPECT_TRUE(nchwc_conv_fit(24, 104, 1, kBlock).reads_blocked);
  EXPECT_FALSE(nchwc_conv_fit(32, 110, 1, kBlock).blocked);
  EXPECT_FALSE(nchwc_conv_fit(32, 26, 1, kBlock).blocked);
  // Depthwise: channels a multiple of 4.
  EXPECT_TRUE(nchwc_conv_fit(24, 1, 24, kBlock).blocked);
  EXPECT_FALSE(nchwc_conv_fit(58, 1, 58, kBlock).blocked);
  // Grouped: whole blocks per group, in and out.
  EXPECT_FALSE(nchwc_conv_fit(440, 8, 55, kBlock).blocked);
  EXPECT_TRUE(nchwc_conv_fit(448, 16, 28, kBlock).blocked);
  EXPECT_TRUE(nchwc_conv_fit(64, 8, 8, 8).blocked);    // at block 8 a group of 8 is whole
  EXPECT_FALSE(nchwc_conv_fit(64, 64, 1, 0).blocked);  // no blocked layout at all
}

TEST(OrtNchwc, CountsTheReordersAroundABlockedChain) {
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 8, 8});
  auto c1 = b.conv(x, b.weight("w1", {32, 16, 3, 3}), {.pad = 1, .act = "relu"});
  auto c2 = b.conv(c1, b.weight("w2", {32, 32, 1, 1}));
  b.output("y", b.relu(b.ewadd(c1, c2)));
  NchwcLayout l = predict_nchwc(b.finish(), kBlock);
  EXPECT_EQ(l.blocked_convs, 2);
  EXPECT_EQ(l.plain_convs, 0);
  EXPECT_EQ(l.reorder_inputs, 1);   // x, into the layout
  EXPECT_EQ(l.reorder_outputs, 1);  // y, out of it: the add and relu are carried
  EXPECT_NEAR(l.reorder_mb, (16 + 32) * 64 * 4 / 1e6, 1e-9);
}

TEST(OrtNchwc, ABroadcastScaleLeavesTheLayout) {
  // A squeeze-excitation's Mul of [1,C,H,W] by [1,C,1,1] is not carried: the image goes out
  // of the layout and the product back in for the next conv.
  GraphBuilder b;
  auto x = b.input("x", {1, 32, 8, 8});
  auto c = b.conv(x, b.weight("w", {32, 32, 1, 1}));
  auto s = b.sigmoid(b.conv(b.op("global_avgpool", {c}), b.weight("ws", {32, 32, 1, 1})));
  auto y = b.conv(b.op("mul", {c, s}), b.weight("w2", {32, 32, 1, 1}));
  b.output("y", y);
  NchwcLayout l = predict_nchwc(b.finish(), kBlock);
  EXPECT_EQ(l.blocked_convs, 3);
  EXPECT_EQ(l.reorder_inputs, 2);   // x, and the product
  EXPECT_EQ(l.reorder_outputs, 3);  // c and s for the Mul, y
}

TEST(OrtNchwc, AConcatOfManyBlockedTensorsStaysBlocked) {
  // DenseNet's concats read dozens of tensors, every one of them blocked and aligned.
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 8, 8});
  std::vector<TensorRef> parts;
  for (int i = 0; i < 40; ++i)
    parts.push_back(b.conv(x, b.weight(fmt::format("w{}", i), {16, 16, 1, 1})));
  b.output("y", b.conv(b.concat(1, parts), b.weight("wy", {16, 640, 1, 1})));
  NchwcLayout l = predict_nchwc(b.finish(), kBlock);
  EXPECT_EQ(l.blocked_convs, 41);
  EXPECT_EQ(l.reorder_outputs, 1);  // y alone
}

TEST(OrtNchwc, NoBlockNoPrediction) {
  GraphBuilder b;
  b.output("y", b.conv(b.input("x", {1, 16, 8, 8}), b.weight("w", {16, 16, 1, 1})));
  Graph g = b.finish();
  NchwcLayout l = predict_nchwc(g, 0);
  EXPECT_EQ(l.reorders(), 0);
  EXPECT_EQ(l.blocked_convs, 0);
  EXPECT_FALSE(pad_channels_for_nchwc(g, 0));
}

// A RegNet-like block of 40 channels in groups of 4 (10 groups, blocked at neither block
// size): the stem conv's output region, padded to 48 channels, gets two more groups and the
// groups merged by fours, so every conv runs blocked, at block 16 and at block 8; the head's
// flatten reads the region cut back.
Graph grouped_block() {
  GraphBuilder b;
  auto x = b.input("x", {2, 16, 8, 8});
  auto a = b.conv(x, b.weight("wa", {40, 16, 1, 1}), {.act = "relu"});
  auto g = b.conv(a, b.weight("wg", {40, 4, 3, 3}), {.pad = 1, .act = "relu"});
  auto bn = b.batchnorm(g, "bn");
  auto se = b.sigmoid(b.op("global_avgpool", {bn}));
  auto s = b.op("mul", {bn, se});
  auto r = b.ewadd(s, a);
  auto c = b.conv(r, b.weight("wc", {32, 40, 1, 1}));
  b.output("y", c);
  b.output("pooled", b.op("flatten", {b.op("global_avgpool", {r})}, {{"axis", int64_t{1}}}));
  return b.finish();
}

TEST(OrtNchwc, PadsAGroupedRegionToWholeBlocksExactly) {
  Graph g = grouped_block();
  NchwcLayout before = predict_nchwc(g, kBlock);
  EXPECT_EQ(before.plain_convs, 1);  // the grouped conv
  auto p = pad_channels_for_nchwc(g, kBlock);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->regions.size(), 1u);
  EXPECT_EQ(p->regions[0].substr(0, 18), "40 -> 48 channels:");
  EXPECT_EQ(p->after.plain_convs, 0);
  EXPECT_EQ(p->after.blocked_convs, 3);
  EXPECT_EQ(p->other_block, 8);
  EXPECT_EQ(p->other_before.plain_convs, 1);
  EXPECT_EQ(p->other_after.plain_convs, 0);
  EXPECT_TRUE(p->left_out.empty());
  ASSERT_NO_THROW(validate(p->graph));
  EXPECT_EQ(p->graph.type(p->graph.outputs()[1].ref).shape, (Shape{2, 40}));
  EXPECT_EQ(count_op(p->graph, "slice"), 1u);  // the flatten's input, not the conv's
  expect_same_before_and_after_folding(g, p->graph);
}

// 64 channels, aligned at both block sizes, through a grouped 3x3 conv of `group_width`
// channels a group.
Graph aligned_grouped_block(int64_t group_width) {
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 8, 8});
  auto a = b.conv(x, b.weight("wa", {64, 16, 1, 1}), {.act = "relu"});
  auto g = b.conv(a, b.weight("wg", {64, group_width, 3, 3}), {.pad = 1, .act = "relu"});
  b.output("y", b.conv(g, b.weight("wc", {16, 64, 1, 1})));
  return b.finish();
}

// ResNeXt's first stage: 128 channels in groups of 4 are aligned, but the groups are narrower
// than a block of either size: merged by fours, with nothing added, the conv runs blocked.
TEST(OrtNchwc, MergesNarrowGroupsOfAnAlignedRegion) {
  Graph original = aligned_grouped_block(4);
  auto p = pad_channels_for_nchwc(original, kBlock);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->regions.size(), 1u);
  EXPECT_EQ(p->regions[0].substr(0, 30), "64 (groups merged) channels: 1");
  EXPECT_EQ(p->before.plain_convs, 1);
  EXPECT_EQ(p->after.plain_convs, 0);
  EXPECT_EQ(p->other_after.plain_convs, 0);
  EXPECT_EQ(count_op(p->graph, "slice"), 0u);
  auto c = check_equivalent(original, p->graph, {.seed = 3});
  EXPECT_TRUE(c.ok) << c.failure();
}

// Groups of 8 run blocked at block 8 already: merging them into 16 gains at block 16 only and
// would double their arithmetic at block 8, so the region is left as it is, and named.
TEST(OrtNchwc, LeavesAMergeThatGainsAtThisBlockOnly) {
  Graph original = aligned_grouped_block(8);
  auto p = pad_channels_for_nchwc(original, kBlock);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->regions.empty());
  ASSERT_EQ(p->left_out.size(), 1u);
  EXPECT_EQ(p->left_out[0],
            "64 (groups merged) channels, 1 region: gains at block 16 only (at block 8 it blocks "
            "no more convolutions and copies no fewer bytes)");
  EXPECT_EQ(count_op(p->graph, "conv"), 3u);
  EXPECT_EQ(p->graph.num_ops(), original.num_ops());
  // At block 8 there is nothing to merge: groups of 8 run blocked there.
  auto at8 = pad_channels_for_nchwc(original, 8);
  EXPECT_FALSE(at8 && !at8->regions.empty());
}

// On an AVX2 machine (block 8) groups of 4 are merged into 16, not 8: a whole number of blocks
// of either size, so the file gains where it runs at block 16 too.
TEST(OrtNchwc, AtBlockEightGroupsAreMergedToBlockSixteen) {
  Graph original = aligned_grouped_block(4);
  auto p = pad_channels_for_nchwc(original, 8);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->regions.size(), 1u);
  EXPECT_TRUE(p->left_out.empty());
  EXPECT_EQ(p->other_block, 16);
  EXPECT_EQ(p->before.plain_convs, 1);
  EXPECT_EQ(p->after.plain_convs, 0);
  EXPECT_EQ(p->other_after.plain_convs, 0);
  bool merged_to_16 = false;
  for (NodeId id = 0; id < p->graph.num_slots(); ++id)
    if (p->graph.alive(id) && p->graph.node(id).op->name == "conv") {
      const Node& n = p->graph.node(id);
      merged_to_16 = merged_to_16 || p->graph.type(n.inputs[1]).shape[1] == 16;
    }
  EXPECT_TRUE(merged_to_16);  // 16 input channels a group
  expect_same_before_and_after_folding(original, p->graph);
}

TEST(OrtNchwc, LeavesARegionAGraphInputStartsAlone) {
  // The 40-channel tensor is fed, not computed: nothing can write it padded.
  GraphBuilder b;
  auto x = b.input("x", {1, 40, 8, 8});
  b.output("y", b.conv(b.relu(x), b.weight("wg", {40, 8, 3, 3}), {.pad = 1}));
  EXPECT_FALSE(pad_channels_for_nchwc(b.finish(), kBlock));
}

TEST(OrtNchwc, CutsARegionBackBeforeADivision) {
  // A division reading a region's tensors would divide by their added channels: it reads
  // them cut back, while the grouped conv still gets its padding.
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 8, 8});
  auto a = b.conv(x, b.weight("wa", {40, 16, 1, 1}));
  auto g = b.conv(a, b.weight("wg", {40, 4, 3, 3}), {.pad = 1});
  b.output("y", b.conv(b.op("div", {g, a}), b.weight("wy", {16, 40, 1, 1})));
  Graph original = b.finish();
  auto p = pad_channels_for_nchwc(original, kBlock);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->after.plain_convs, 0);
  EXPECT_EQ(count_op(p->graph, "slice"), 2u);  // both of the division's inputs
  auto c = check_equivalent(original, p->graph, {.seed = 3});
  EXPECT_TRUE(c.ok) << c.failure();
}

// A GhostNet block: each ghost module concatenates a conv's 36 channels with a depthwise conv
// of them (72 channels; parts of 36 are whole blocks of neither size, so the Concat leaves the
// layout). Both halves padded to 48 keep it blocked: the concatenation is 96 wide, its
// padding between the halves; the batch norm, the residual Add with the shortcut conv, and the
// squeeze-excitation's mean, scale and product lay their 72 channels out alike, and the
// convs that read them get zero weights where the padding is. The head reads the sum cut
// back: two Slices and a Concat.
TEST(OrtNchwc, PadsTheHalvesOfAConcatenationAndLaysOutItsReadersAlike) {
  GraphBuilder b;
  auto x = b.input("x", {2, 16, 8, 8});
  auto ghost = [&](TensorRef in, int64_t in_ch, const std::string& name) {
    auto primary = b.conv(in, b.weight(name + "_p", {36, in_ch, 1, 1}), {.act = "relu"});
    auto cheap = b.conv(primary, b.weight(name + "_c", {36, 1, 3, 3}), {.pad = 1, .act = "relu"});
    return b.concat(1, {primary, cheap});
  };
  auto shortcut = b.conv(x, b.weight("ws", {72, 16, 1, 1}));
  auto g1 = ghost(x, 16, "g1");
  auto sum = b.ewadd(b.batchnorm(ghost(g1, 72, "g2"), "bn"), shortcut);
  auto mean =
      b.op("reduce_mean", {sum}, {{"axes", std::vector<int64_t>{2, 3}}, {"keepdims", int64_t{1}}});
  auto scale = b.sigmoid(b.conv(b.relu(b.conv(mean, b.weight("se1", {16, 72, 1, 1}))),
                                b.weight("se2", {72, 16, 1, 1})));
  auto excited = b.op("mul", {sum, scale});
  b.output("y", b.conv(excited, b.weight("wy", {16, 72, 1, 1})));
  b.output("pooled", b.op("flatten", {b.op("global_avgpool", {sum})}, {{"axis", int64_t{1}}}));
  Graph g = b.finish();
  NchwcLayout before = predict_nchwc(g, kBlock);
  auto p = pad_channels_for_nchwc(g, kBlock);
  ASSERT_TRUE(p);
  EXPECT_LT(p->after.reorders(), before.reorders());
  EXPECT_LT(p->after.reorder_mb, before.reorder_mb);
  ASSERT_NO_THROW(validate(p->graph));
  size_t wide = 0;
  for (NodeId id = 0; id < p->graph.num_slots(); ++id)
    if (p->graph.alive(id) && p->graph.node(id).op->name == "concat" &&
        p->graph.node(id).outputs[0].shape == Shape{2, 96, 8, 8})
      ++wide;
  EXPECT_EQ(wide, 2u);               // both ghost modules' concatenations, halves of 48
  EXPECT_TRUE(p->left_out.empty());  // 36 channels are whole blocks of neither size
  EXPECT_EQ(p->graph.type(p->graph.outputs()[1].ref).shape, (Shape{2, 72}));
  expect_same_before_and_after_folding(g, p->graph);
}

// Parts padded by more than half their channels are left as they are (measured slower).
TEST(OrtNchwc, LeavesAConcatenationOfNarrowPartsAlone) {
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 8, 8});
  auto primary = b.conv(x, b.weight("wp", {8, 16, 1, 1}), {.act = "relu"});
  auto cheap = b.conv(primary, b.weight("wc", {8, 1, 3, 3}), {.pad = 1});
  b.output("y", b.conv(b.concat(1, {primary, cheap}), b.weight("wy", {16, 16, 1, 1})));
  auto p = pad_channels_for_nchwc(b.finish(), kBlock);
  EXPECT_FALSE(p && p->after.reorders() < p->before.reorders());
}

}  // namespace
}  // namespace graphsub::ort
