// Built-in models: structure (operator counts, output shapes) of each benchmark model as in
// TASO's configurations, determinism of the weights, and execution of the small ones.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/error.h"
#include "exec/reference_executor.h"
#include "ir/hash.h"
#include "models/models.h"

namespace graphsub {
namespace {

std::map<std::string, size_t> counts(const Graph& g) {
  std::map<std::string, size_t> c;
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id) && !g.node(id).is_source()) ++c[g.node(id).op->name];
  return c;
}

Shape output_shape(const Graph& g) {
  return g.type(g.outputs().at(0).ref).shape;
}

TEST(Models, ResNet50HasBottleneckStagesAndProjections) {
  Graph g = resnet50(false);
  auto c = counts(g);
  EXPECT_EQ(c["conv"], 16u * 3 + 4);  // 16 blocks, a projection at each stage's first block
  EXPECT_EQ(c["ewadd"], 16u);
  EXPECT_EQ(c["relu"], 16u);
  EXPECT_EQ(output_shape(g), (Shape{1, 2048, 7, 7}));
  EXPECT_EQ(g.type({g.inputs()[0], 0}).shape, (Shape{1, 64, 56, 56}));
}

TEST(Models, ResNeXt50UsesThirtyTwoGroups) {
  Graph g = resnext50(false);
  auto c = counts(g);
  EXPECT_EQ(c["conv"], 1u + 16 * 3 + 4);
  EXPECT_EQ(c["poolmax"], 1u);
  size_t grouped = 0;
  for (NodeId id = 0; id < g.num_slots(); ++id) {
    if (!g.alive(id) || g.node(id).op->name != "conv") continue;
    const Node& n = g.node(id);
    if (g.type(n.inputs[0]).shape[1] / g.type(n.inputs[1]).shape[1] == 32) ++grouped;
  }
  EXPECT_EQ(grouped, 16u);
  EXPECT_EQ(output_shape(g), (Shape{1, 2048, 7, 7}));
}

TEST(Models, NasNetAHasFifteenNormalAndThreeReductionCells) {
  Graph g = nasnet_a(false);
  auto c = counts(g);
  EXPECT_EQ(c["conv"], 1u + 15 * 12 + 3 * 10);
  EXPECT_EQ(c["concat"], 18u);
  EXPECT_EQ(c["ewadd"], 18u * 5);
  EXPECT_EQ(c["poolavg"], 15u * 3 + 3 * 2);
  EXPECT_EQ(c["poolmax"], 1u + 3 * 2);
  EXPECT_EQ(output_shape(g), (Shape{1, 5 * 1024, 7, 7}));
}

TEST(Models, NasRnnHasEightCombinationsPerStep) {
  Graph g = nasrnn(false);
  auto c = counts(g);
  EXPECT_EQ(c["matmul"], 5u * 16);
  EXPECT_EQ(c["ewadd"], 5u * 11);
  EXPECT_EQ(c["ewmul"], 5u * 4);
  EXPECT_EQ(g.inputs().size(), 5u);
  EXPECT_EQ(output_shape(g), (Shape{1, 512}));
}

TEST(Models, BertHasEightAttentionLayers) {
  Graph g = bert(false);
  auto c = counts(g);
  EXPECT_EQ(c["matmul"], 8u * 6);
  EXPECT_EQ(c["transpose"], 8u * 4);
  EXPECT_EQ(c["reshape"], 8u * 4);
  EXPECT_EQ(c["softmax"], 8u);
  EXPECT_EQ(c["smul"], 8u);
  EXPECT_EQ(c["ewadd"], 8u);  // residual connections
  EXPECT_EQ(output_shape(g), (Shape{1024, 1024}));
  EXPECT_THROW(bert(false, {.hidden = 100, .heads = 16}), Error);
}

TEST(Models, InceptionV3ModulesAndShapes) {
  Graph g = inception_v3(false);
  auto c = counts(g);
  EXPECT_EQ(c["conv"], 5u + 3 * 7 + 4 + 4 * 10 + 6 + 2 * 9);
  EXPECT_EQ(c["concat"], 11u);
  EXPECT_EQ(output_shape(g), (Shape{1, 2048, 1, 1}));
}

TEST(Models, SqueezeNetAndVgg19) {
  Graph s = squeezenet(false);
  EXPECT_EQ(counts(s)["conv"], 26u);
  EXPECT_EQ(counts(s)["concat"], 8u);
  EXPECT_EQ(output_shape(s), (Shape{1, 1000, 1, 1}));
  Graph v = vgg19(false);
  EXPECT_EQ(counts(v)["conv"], 16u);
  EXPECT_EQ(counts(v)["poolmax"], 5u);
  EXPECT_EQ(output_shape(v), (Shape{1, 512, 7, 7}));
}

TEST(Models, RegistryBuildsEveryNameAndRejectsUnknown) {
  for (const auto& name : model_names()) {
    Graph g = build_model(name, false);
    EXPECT_GT(g.num_ops(), 0u) << name;
    EXPECT_NO_THROW(validate(g)) << name;
  }
  try {
    build_model("alexnet");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("resnet50"), std::string::npos) << e.what();
  }
}

TEST(Models, WeightsAreDeterministic) {
  Graph a = nasrnn(true, 32, 2), b = nasrnn(true, 32, 2);
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  ASSERT_EQ(a.weights().size(), b.weights().size());
  for (size_t i = 0; i < a.weights().size(); ++i)
    EXPECT_EQ(*a.node(a.weights()[i]).data, *b.node(b.weights()[i]).data);
}

TEST(Models, SmallConfigurationsRun) {
  Graph r = nasrnn(true, 16, 3);
  auto out = run_reference(r, random_feeds(r, 3));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{1, 16}));
  Graph t = bert(true, {.batch = 2, .seq = 4, .hidden = 8, .heads = 2, .layers = 2});
  auto o2 = run_reference(t, random_feeds(t, 3));
  EXPECT_EQ(o2[0].shape, (Shape{8, 8}));
  bool nonzero = false, finite = true;
  for (float v : o2[0].data) {
    nonzero = nonzero || v != 0;
    finite = finite && std::isfinite(v);
  }
  EXPECT_TRUE(nonzero);
  EXPECT_TRUE(finite);
}

}  // namespace
}  // namespace graphsub
