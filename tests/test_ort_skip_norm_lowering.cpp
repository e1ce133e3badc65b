// The ort target's skip-normalization lowering (ort/skip_norm_lowering.h): which Adds ONNX
// Runtime would fuse with the normalization after them, the decision from the fused and
// unfused prices, and the exporter writing the chosen Adds as Sum, which reads back as Add.
#include <gtest/gtest.h>

#include <string>

#include "ir/builder.h"
#include "onnx/onnx_model.h"
#include "opt/cost/cost_model.h"
#include "ort/skip_norm_lowering.h"

namespace graphsub::ort {
namespace {

// Prices the skip normalizations at `fused` and every other operator at 1, counting the
// configurations it was asked for.
class SkipNormCost : public opt::CostModel {
 public:
  explicit SkipNormCost(double fused) : fused_(fused) {}
  std::string name() const override { return "test"; }
  std::string assumptions() const override { return "skip norms at a given price"; }
  std::string_view runtime() const override { return "onnxruntime"; }
  int asked = 0;

 protected:
  double config_cost(const opt::OpConfig& c) override {
    ++asked;
    return c.op->name.starts_with("ort_skip") ? fused_ : 1;
  }

 private:
  double fused_;
};

// x + r feeding a LayerNormalization over the last axis (a residual block's), and a second
// Add whose output no normalization reads.
struct Block {
  Graph g;
  NodeId add = 0, other = 0;
};
Block residual_block(const std::string& norm = "layernorm", int64_t axis = -1,
                     Shape skip_shape = {1, 4, 8}) {
  GraphBuilder b;
  TensorRef x = b.input("x", {1, 4, 8}), r = b.input("r", skip_shape);
  TensorRef sum = b.op("add", {x, r});
  Shape gamma = axis == -1 ? Shape{8} : Shape{4, 8};
  std::vector<TensorRef> ins = {sum, b.weight("gamma", gamma)};
  TensorRef y = b.op(norm, ins, {{"axis", axis}, {"epsilon", 1e-5}});
  TensorRef z = b.op("add", {y, x});
  b.output("z", z);
  Block blk{b.finish()};
  blk.add = sum.node;
  blk.other = z.node;
  return blk;
}

TEST(SkipNormLowering, FindsTheAddsOnnxRuntimeWouldFuseWithTheNormAfterThem) {
  Block blk = residual_block();
  auto sites = skip_norm_sites(blk.g);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].add, blk.add);
  EXPECT_EQ(blk.g.node(sites[0].norm).op->name, "layernorm");
  EXPECT_EQ(skip_norm_sites(residual_block("rms_norm").g).size(), 1u);
  // Not fused: a normalization over more than the last axis, an Add that broadcasts.
  EXPECT_TRUE(skip_norm_sites(residual_block("layernorm", -2).g).empty());
  EXPECT_TRUE(skip_norm_sites(residual_block("layernorm", -1, {1, 1, 8}).g).empty());
}

TEST(SkipNormLowering, WritesAsSumOnlyTheAddsWhoseFusedKernelIsPricedSlower) {
  Block blk = residual_block();
  SkipNormCost slow(10), fast(1.5), near(2.4);  // the Add and the norm together cost 2
  SkipNormLowering a, b, c;
  a.price(slow, blk.g);
  b.price(fast, blk.g);
  c.price(near, blk.g);
  EXPECT_EQ(a.adds(blk.g), std::vector<NodeId>{blk.add});
  EXPECT_TRUE(b.adds(blk.g).empty());
  EXPECT_TRUE(c.adds(blk.g).empty()) << "within kSlowerMargin of the unfused pair";
  EXPECT_NE(a.describe(blk.g).find("1 of 1 Add(s) feeding a normalization written as Sum"),
            std::string::npos)
      << a.describe(blk.g);
  EXPECT_EQ(b.describe(blk.g), "");
  // Priced once per configuration: a second graph with the same site asks nothing more.
  int asked = slow.asked;
  a.price(slow, residual_block().g);
  EXPECT_EQ(slow.asked, asked);
  // A site of a configuration never priced stays an Add.
  SkipNormLowering unpriced;
  EXPECT_TRUE(unpriced.adds(blk.g).empty());
}

TEST(SkipNormLowering, TheExporterWritesTheChosenAddsAsSumWhichReadsBackAsAdd) {
  Block blk = residual_block();
  SkipNormCost slow(10);
  auto lowering = std::make_shared<SkipNormLowering>();
  lowering->price(slow, blk.g);
  ExportOptions eo;
  eo.adds_as_sum = [lowering](const Graph& g) { return lowering->adds(g); };
  std::string bytes = export_onnx_bytes(blk.g, nullptr, eo);
  auto counts = onnx_node_counts(bytes);
  EXPECT_EQ(counts["Sum"], 1);
  EXPECT_EQ(counts["Add"], 1);  // the Add no normalization reads
  EXPECT_EQ(onnx_node_counts(export_onnx_bytes(blk.g, nullptr))["Sum"], 0);
  ImportedModel back = import_onnx_bytes(bytes, "");
  EXPECT_TRUE(back.summary.opaque.empty());
  EXPECT_EQ(skip_norm_sites(back.graph).size(), 1u);
}

}  // namespace
}  // namespace graphsub::ort
