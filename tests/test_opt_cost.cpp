// Cost models: the analytic roofline, free weight expressions, the measured table and its
// cache file, calibration fitting and rank correlation.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "ir/builder.h"
#include "opt/cost/analytic_cost.h"
#include "opt/cost/calibration.h"
#include "opt/cost/machine_profile.h"
#include "opt/cost/measured_cost.h"
#include "opt/match/graph_index.h"

namespace graphsub::opt {
namespace {

MachineProfile fixed_machine() {
  return {.cpu = "test CPU",
          .isa = "any",
          .threads = 1,
          .peak_gflops = 100,
          .bandwidth_gbs = 10,
          .op_overhead_us = 2};
}

std::string temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("graphsub-test-" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

TEST(OptCost, AnalyticIsARooflinePlusOverhead) {
  GraphBuilder b;
  auto x = b.input("x", {1, 64, 28, 28});
  auto c = b.conv(x, b.weight("w", {64, 64, 3, 3}), {.pad = 1});
  b.output("y", b.relu(c));
  Graph g = b.finish();
  AnalyticCostModel m(fixed_machine());
  auto constant = constant_nodes(g);
  NodeId conv = c.node, relu = g.outputs()[0].ref.node;
  std::vector<TensorType> in = {g.type(g.node(conv).inputs[0]), g.type(g.node(conv).inputs[1])};
  OpCost cc = op_cost(*g.node(conv).op, g.node(conv).attrs, in, g.node(conv).outputs);
  double expect = std::max(cc.flops / 100e3, cc.bytes / 10e3) + 2;
  EXPECT_NEAR(m.node_cost(g, conv, constant), expect, 1e-9);
  EXPECT_GT(m.node_cost(g, conv, constant), m.node_cost(g, relu, constant));
  EXPECT_NEAR(m.graph_cost(g), m.node_cost(g, conv, constant) + m.node_cost(g, relu, constant),
              1e-9);
  EXPECT_EQ(m.node_cost(g, x.node, constant), 0);  // inputs and weights are free
}

// ONNX's Attention exists from opset 23 (OpDef::onnx_since): for a file of an older opset it
// costs what a target that cannot run it costs, so the search never writes one there.
TEST(OptCost, AnOperatorNewerThanTheWrittenOpsetIsNotRunThere) {
  GraphBuilder b;
  auto q = b.input("q", {1, 2, 3, 4});
  auto kv = b.input("kv", {1, 2, 3, 4});
  auto a = b.op("attention", {q, kv, kv}, {{"scale", 0.5}});
  b.output("y", b.relu(a));
  Graph g = b.finish();
  auto constant = constant_nodes(g);
  AnalyticCostModel m(fixed_machine());
  for (int64_t opset : {0, 23, 24}) {
    m.set_written_opset(opset);
    EXPECT_LT(m.node_cost(g, a.node, constant), 1e3) << opset;
  }
  m.set_written_opset(17);
  EXPECT_EQ(m.node_cost(g, a.node, constant), CostModel::kNotRunHere);
  EXPECT_LT(m.node_cost(g, g.outputs()[0].ref.node, constant), 1e3);  // relu: every opset
}

TEST(OptCost, WeightExpressionsAreFree) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 8, 8});
  auto w = b.op("enlarge", {b.weight("w", {4, 4, 1, 1})}, {{"kernel", std::vector<int64_t>{3, 3}}});
  b.output("y", b.conv(x, w, {.pad = 1}));
  Graph g = b.finish();
  AnalyticCostModel m(fixed_machine());
  auto constant = constant_nodes(g);
  EXPECT_TRUE(constant[w.node]);
  EXPECT_EQ(m.node_cost(g, w.node, constant), 0);
  EXPECT_GT(m.graph_cost(g), 0);
  EXPECT_FALSE(constant[g.outputs()[0].ref.node]);
}

TEST(OptCost, ConfigKeysIgnoreSplitPointsButNotShapesOrConstness) {
  GraphBuilder b;
  auto x = b.input("x", {2, 4});
  auto w = b.weight("w", {4, 4});
  auto m1 = b.matmul(x, w);
  auto m2 = b.matmul(x, b.relu(b.input("v", {4, 4})));
  b.output("a", m1);
  b.output("b", m2);
  Graph g = b.finish();
  auto constant = constant_nodes(g);
  auto k1 = config_key(op_config(g, m1.node, constant));
  auto k2 = config_key(op_config(g, m2.node, constant));
  EXPECT_NE(k1, k2);  // the weight is marked constant in k1 only
  EXPECT_NE(k1.find("w:f32[4,4]"), std::string::npos) << k1;
}

TEST(OptCost, MeasuredTableIsCachedAndReused) {
  std::string dir = temp_dir("measured");
  GraphBuilder b;
  auto x = b.input("x", {8, 16});
  b.output("y", b.relu(b.matmul(x, b.weight("w", {16, 16}))));
  Graph g = b.finish();
  double first = 0;
  std::string path;
  {
    MeasuredCostModel m(dir, fixed_machine(), null_reporter());
    first = m.graph_cost(g);
    EXPECT_GT(first, 0);
    EXPECT_EQ(m.measured_now(), 2u);
    path = m.path();
  }  // saved here
  ASSERT_TRUE(std::filesystem::exists(path));
  MeasuredCostModel again(dir, fixed_machine(), null_reporter());
  EXPECT_EQ(again.table_size(), 2u);
  EXPECT_DOUBLE_EQ(again.graph_cost(g), first);
  EXPECT_EQ(again.measured_now(), 0u);  // nothing re-measured
  EXPECT_NE(again.assumptions().find("uncalibrated"), std::string::npos);

  Calibration cal;
  cal.fitted = true;
  cal.scale = 2;
  cal.per_op_us = 3;
  cal.per_graph_us = 7;
  cal.samples = 4;
  again.set_calibration(cal);
  again.save();
  MeasuredCostModel calibrated(dir, fixed_machine(), null_reporter());
  EXPECT_TRUE(calibrated.calibration().fitted);
  EXPECT_NEAR(calibrated.graph_cost(g), 2 * first + 2 * 3 + 7, 1e-6 + 1e-9 * first);
}

// Fused activations are timed as their unfused twin: unfusing one never looks cheaper.
TEST(OptCost, FusedActivationIsTimedAsTheUnfusedOperator) {
  std::string dir = temp_dir("fused");
  GraphBuilder b;
  auto x = b.input("x", {4, 32});
  auto w = b.weight("w", {32, 32});
  auto fused = b.matmul(x, w, "relu");
  auto plain = b.matmul(x, w);
  auto relu = b.relu(plain);
  b.output("a", fused);
  b.output("b", relu);
  Graph g = b.finish();
  auto constant = constant_nodes(g);
  MeasuredCostModel m(dir, fixed_machine(), null_reporter());
  double f = m.node_cost(g, fused.node, constant), p = m.node_cost(g, plain.node, constant);
  EXPECT_DOUBLE_EQ(f, p);
  EXPECT_EQ(m.measured_now(), 1u);  // one configuration timed for both
  EXPECT_GT(p + m.node_cost(g, relu.node, constant), f);
}

// Pools and concats are timed on operands a 1x1 convolution wrote (the layout they get in
// real graphs), and only their own node is timed; other operators, and operands that are not
// images, are timed as they are.
TEST(OptCost, PoolsAndConcatsAreTimedAfterAConvolution) {
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 8, 8});
  auto pool = b.op("poolavg", {x},
                   {{"kernel", std::vector<int64_t>{3, 3}},
                    {"stride", std::vector<int64_t>{1, 1}},
                    {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  auto cat = b.op("concat", {x, pool}, {{"axis", int64_t{1}}});
  auto m = b.input("m", {4, 16});
  auto mm = b.matmul(m, b.weight("w", {16, 16}));
  auto flat = b.op("concat", {m, mm}, {{"axis", int64_t{0}}});
  b.output("a", cat);
  b.output("b", flat);
  Graph g = b.finish();
  auto constant = constant_nodes(g);

  auto producers = [](const Graph& mg, NodeId node) {
    std::vector<std::string> ops;
    for (auto& in : mg.node(node).inputs) ops.push_back(mg.node(in.node).op->name);
    return ops;
  };
  for (NodeId id : {pool.node, cat.node}) {
    auto [mg, node] = measurement_graph(op_config(g, id, constant));
    EXPECT_EQ(mg.node(node).op->name, g.node(id).op->name);
    for (auto& op : producers(mg, node)) EXPECT_EQ(op, "conv") << g.node(id).op->name;
    for (auto& in : mg.node(node).inputs) {
      const Node& conv = mg.node(in.node);
      EXPECT_EQ(conv.outputs[0].shape, mg.type(conv.inputs[0]).shape);  // C -> C, 1x1
    }
  }
  for (NodeId id : {mm.node, flat.node}) {
    auto [mg, node] = measurement_graph(op_config(g, id, constant));
    for (auto& op : producers(mg, node)) EXPECT_NE(op, "conv") << g.node(id).op->name;
  }
  // Such a graph runs and times the pool.
  MeasuredCostModel model(temp_dir("conv_layouts"), fixed_machine(), null_reporter());
  EXPECT_GT(model.isolated_us(op_config(g, pool.node, constant)), 0);
}

TEST(OptCost, UnreadableTableIsIgnoredWithAWarning) {
  std::string dir = temp_dir("corrupt");
  MeasuredCostModel probe(dir, fixed_machine(), null_reporter());
  std::ofstream(probe.path()) << "{ not json";
  struct Collect : Reporter {
    int warnings = 0;
    void warn(std::string_view) override { ++warnings; }
  } rep;
  MeasuredCostModel m(dir, fixed_machine(), rep);
  EXPECT_EQ(rep.warnings, 1);
  EXPECT_EQ(m.table_size(), 0u);
}

TEST(OptCost, CachedMachineProfileIsReadBack) {
  std::string dir = temp_dir("machine");
  auto path = std::filesystem::path(dir) / ("machine-" + cpu_tag(1) + ".json");
  std::ofstream(path) << R"({"version":2,"cpu":"X","isa":"Y","threads":1,"peak_gflops":12.5,)"
                      << R"("bandwidth_gbs":3.5,"op_overhead_us":0.25,"gemm_overhead_us":1.5})";
  MachineProfile p = cached_machine_profile(dir, 1, null_reporter());
  EXPECT_EQ(p.cpu, "X");
  EXPECT_DOUBLE_EQ(p.peak_gflops, 12.5);
  EXPECT_DOUBLE_EQ(p.bandwidth_gbs, 3.5);
  EXPECT_NE(p.str().find("12.5 GFLOP/s"), std::string::npos);
  EXPECT_DOUBLE_EQ(p.overhead_us(true), 1.5);
  EXPECT_DOUBLE_EQ(p.overhead_us(false), 0.25);
}

TEST(OptCost, GemmOverheadAppliesToMatmulAndConvOnly) {
  MachineProfile m = fixed_machine();
  m.gemm_overhead_us = 7;
  GraphBuilder b;
  auto x = b.input("x", {1, 16});
  auto y = b.matmul(x, b.weight("w", {16, 16}));
  b.output("y", b.relu(y));
  Graph g = b.finish();
  auto constant = constant_nodes(g);
  AnalyticCostModel plain(fixed_machine()), gemm(m);
  NodeId relu = g.outputs()[0].ref.node;
  EXPECT_NEAR(gemm.node_cost(g, y.node, constant) - plain.node_cost(g, y.node, constant), 5, 1e-9);
  EXPECT_DOUBLE_EQ(gemm.node_cost(g, relu, constant), plain.node_cost(g, relu, constant));
}

// conv_add (fuse-conv-add) pays the GEMM overhead once, where conv, ewadd and relu pay three
// overheads and stream the sum twice more: the fused graph is cheaper. The measured model
// prices it as its convolution's timing plus reading the residual at the machine's bandwidth.
TEST(OptCost, ConvAddIsOneGemmAndCheaperThanItsParts) {
  MachineProfile machine = fixed_machine();
  machine.gemm_overhead_us = 7;
  GraphBuilder b;
  auto x = b.input("x", {1, 16, 14, 14});
  auto r = b.input("r", {1, 32, 14, 14});
  auto w = b.weight("w", {32, 16, 1, 1});
  auto fused = b.op("conv_add", {x, w, r}, {{"act", std::string("relu")}});
  b.output("fused", fused);
  auto sum = b.ewadd(b.conv(x, w), r);
  b.output("parts", b.relu(sum));
  Graph g = b.finish();
  NodeId plain_conv = g.node(sum.node).inputs[0].node;
  auto constant = constant_nodes(g);
  AnalyticCostModel analytic(machine);
  double parts = analytic.graph_cost(g) - analytic.node_cost(g, fused.node, constant);
  EXPECT_LT(analytic.node_cost(g, fused.node, constant) + 2 * 2, parts);
  OpCost oc =
      op_cost(*g.node(fused.node).op, g.node(fused.node).attrs,
              std::vector<TensorType>{g.type(x), g.type(w), g.type(r)}, g.node(fused.node).outputs);
  EXPECT_NEAR(analytic.node_cost(g, fused.node, constant),
              std::max(oc.flops / 100e3, oc.bytes / 10e3) + 7, 1e-9);
  MeasuredCostModel measured(temp_dir("conv_add"), machine, null_reporter());
  double conv = measured.isolated_us(op_config(g, plain_conv, constant));
  double residual_us = 32 * 14 * 14 * 4 / 10e3;
  EXPECT_NEAR(measured.isolated_us(op_config(g, fused.node, constant)), conv + residual_us, 1e-9);
  EXPECT_EQ(measured.measured_now(), 1u);  // the convolution, once
  EXPECT_EQ(measured.table_size(), 1u);
}

// Splits and concats the fast executor runs as views (row-major data, contiguous slices) cost
// nothing; others are priced as copies.
TEST(OptCost, ViewsOfTheFastExecutorAreFree) {
  GraphBuilder b;
  auto x = b.input("x", {1, 64});
  auto joined = b.concat(1, {b.relu(x), b.tanh(x)});       // contiguous: in place
  auto rows = b.concat(0, {b.input("r", {2, 64}), x});     // axis 0: contiguous
  auto cols = b.concat(1, {b.input("c", {3, 64}), rows});  // outer dim 3: copied
  auto img = b.concat(1, {b.input("i", {1, 4, 8, 8}), b.input("j", {1, 4, 8, 8})});  // image
  auto parts =
      b.op_multi("split", {joined}, {{"axis", 1}, {"sizes", std::vector<int64_t>{32, 96}}});
  auto cut = b.op_multi("split", {cols}, {{"axis", 1}, {"sizes", std::vector<int64_t>{64, 64}}});
  b.output("a", parts[0]);
  b.output("b", parts[1]);
  b.output("c", cut[0]);
  b.output("d", cut[1]);
  b.output("e", img);
  Graph g = b.finish();
  auto constant = constant_nodes(g);
  AnalyticCostModel m(fixed_machine());
  EXPECT_EQ(m.node_cost(g, joined.node, constant), 0);
  EXPECT_EQ(m.node_cost(g, rows.node, constant), 0);
  EXPECT_EQ(m.node_cost(g, parts[0].node, constant), 0);
  EXPECT_GT(m.node_cost(g, cols.node, constant), 2);
  EXPECT_GT(m.node_cost(g, cut[0].node, constant), 2);
  EXPECT_GT(m.node_cost(g, img.node, constant), 2);
}

TEST(OptCost, CalibrationRecoversKnownCoefficients) {
  std::vector<CalibrationSample> s;
  for (int i = 1; i <= 12; ++i) {
    CalibrationFeatures f{
        .isolated_us = 100.0 * i, .ops = 10.0 + 7 * (i % 5), .megabytes = 3.0 * ((i * 7) % 11)};
    s.push_back({f, 1.5 * f.isolated_us + 4 * f.ops + 20 * f.megabytes + 50});
  }
  Calibration c = fit_calibration(s);
  EXPECT_NEAR(c.scale, 1.5, 1e-6);
  EXPECT_NEAR(c.per_op_us, 4, 1e-6);
  EXPECT_NEAR(c.per_mb_us, 20, 1e-6);
  EXPECT_NEAR(c.per_graph_us, 50, 1e-4);
  EXPECT_LT(c.fit_error, 1e-9);
  EXPECT_THROW(fit_calibration({s[0]}), Error);
}

TEST(OptCost, CalibrationKeepsCoefficientsNonNegative) {
  // Times that fall with the operator count would need a negative per-op term.
  std::vector<CalibrationSample> s;
  for (int i = 1; i <= 6; ++i)
    s.push_back({{.isolated_us = 10.0 * i, .ops = 100.0 - i, .megabytes = 0}, 20.0 * i});
  Calibration c = fit_calibration(s);
  EXPECT_GE(c.per_op_us, 0);
  EXPECT_GE(c.per_mb_us, 0);
  EXPECT_GE(c.per_graph_us, 0);
  EXPECT_NEAR(c.scale, 2, 1e-6);
}

TEST(OptCost, RankCorrelation) {
  EXPECT_DOUBLE_EQ(rank_correlation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(rank_correlation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_NEAR(rank_correlation({1, 2, 2, 3}, {1, 2, 3, 4}), 0.9487, 1e-3);  // ties averaged
  EXPECT_THROW(rank_correlation({1}, {1}), Error);
}

}  // namespace
}  // namespace graphsub::opt
