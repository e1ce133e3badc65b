// Real models: torchvision's resnet50, resnext50_32x4d, squeezenet1_1 and inception_v3,
// exported with random weights by Debian's PyTorch, imported, run with graphsub's reference
// executor against ONNX Runtime, exported again and cross-checked in ONNX Runtime.
// Small input sizes keep the suite quick; the benchmark (bench/onnx_bench.sh) uses full ones.
#include <gtest/gtest.h>

#include "exec/reference_executor.h"
#include "ir/hash.h"
#include "onnx/onnx_model.h"
#include "onnx/result_check.h"
#include "opt/analytic_cost.h"
#include "opt/optimize.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

using testing::ort_run;
using testing::run_command;
using testing::scratch_dir;
using testing::tool;
using testing::torchvision_model;

struct Case {
  const char* name;
  int size;        // input height and width
  int small_size;  // under sanitizers
  size_t min_ops;
};

class Torchvision : public ::testing::TestWithParam<Case> {};

// |a - b| <= 1e-4 * max|b| + 1e-4 * |b|: float sums in another order over deep networks.
void expect_close(const HostTensor<float>& got, const HostTensor<float>& want,
                  const std::string& what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  double scale = 0;
  for (float v : want.data) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  double worst = 0;
  size_t bad = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    double d = std::fabs(got.data[i] - want.data[i]);
    worst = std::max(worst, d);
    if (d > 1e-4 * std::max(1.0, scale) + 1e-4 * std::fabs(want.data[i])) ++bad;
  }
  EXPECT_EQ(bad, 0u) << what << ": max abs diff " << worst << " (output scale " << scale << ")";
}

TEST_P(Torchvision, ImportRunsLikeOnnxRuntimeAndExportRoundTrips) {
  const Case& c = GetParam();
  std::string path = torchvision_model(c.name, testing::sanitized() ? c.small_size : c.size);
  ImportedModel m = import_onnx_file(path);
  EXPECT_TRUE(m.summary.opaque.empty()) << c.name << ": " << m.summary.opaque.size()
                                        << " opaque nodes, first " << m.summary.opaque[0].op_type;
  EXPECT_GE(m.graph.num_ops(), c.min_ops);
  ASSERT_EQ(m.graph.inputs().size(), 1u);
  ASSERT_EQ(m.graph.outputs().size(), 1u);
  EXPECT_EQ(m.graph.outputs()[0].name, "logits");

  // Our reference executor agrees with ONNX Runtime on the imported model.
  auto feeds = random_feeds(m.graph, 3);
  const std::string& in_name = m.graph.node(m.graph.inputs()[0]).name;
  auto ours = run_reference(m.graph, feeds);
  auto theirs = ort_run(path, {feeds.at(in_name)});
  ASSERT_EQ(theirs.size(), 1u);
  expect_close(ours[0], theirs[0], std::string(c.name) + " reference vs ONNX Runtime");

  // Exported again (no optimization), the model passes the checker and runs the same in ORT.
  std::string out = scratch_dir("roundtrip") + "/" + c.name + ".onnx";
  export_onnx_file(m.graph, m.info.get(), out);
  std::string log;
  int rc = run_command(
      fmt::format("node {} {} {} --inputs 1 --time 0", tool("ort_crosscheck.js"), path, out), &log);
  EXPECT_EQ(rc, 0) << log;

  // Re-imported, it is the same graph.
  ImportedModel again = import_onnx_file(out);
  EXPECT_EQ(again.graph.num_ops(), m.graph.num_ops());
  EXPECT_EQ(structural_hash(again.graph), structural_hash(m.graph));

  // Optimized (built-in rules, a fixed cost model, a small budget), checked, exported: the
  // result passes onnx::checker and ONNX Runtime gives the original's outputs.
  opt::MachineProfile machine;
  machine.cpu = "test";
  machine.threads = 1;
  machine.peak_gflops = 50;
  machine.bandwidth_gbs = 10;
  machine.op_overhead_us = 2;
  opt::AnalyticCostModel cost(machine);
  opt::OptimizeOptions opts;
  opts.check = false;
  opts.search.budget = 40;
  opt::OptimizeResult r = opt::optimize_graph(m.graph, opts, cost, null_reporter());
  EXPECT_LT(r.optimized.num_ops(), m.graph.num_ops());  // at least the activations fuse
  ResultCheck check = check_results(m.graph, r.optimized, 1, 5, 1e-4, 1e-5, CheckExecutor::Onednn);
  EXPECT_TRUE(check.ok) << check.tensors[0].max_abs;
  std::string opt_path = scratch_dir("optimized") + "/" + c.name + ".onnx";
  export_onnx_file(r.optimized, m.info.get(), opt_path);
  int status = run_command(
      fmt::format("node {} {} {} --inputs 1 --time 0", tool("ort_crosscheck.js"), path, opt_path),
      &log);
  EXPECT_EQ(status, 0) << log;
}

INSTANTIATE_TEST_SUITE_P(Models, Torchvision,
                         ::testing::Values(Case{"resnet50", 64, 32, 100},
                                           Case{"resnext50_32x4d", 64, 32, 100},
                                           Case{"squeezenet1_1", 64, 48, 40},
                                           Case{"inception_v3", 80, 75, 150}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace graphsub
