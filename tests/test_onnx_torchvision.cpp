// Real models: torchvision's resnet50, resnext50_32x4d, squeezenet1_1 and inception_v3,
// exported with random weights by Debian's PyTorch, imported, run with graphsub's reference
// executor against ONNX Runtime, exported again and cross-checked in ONNX Runtime.
// Small input sizes keep the suite quick; the benchmark (bench/onnx_bench.sh) uses full ones.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "check/equivalence.h"
#include "exec/reference_executor.h"
#include "ir/hash.h"
#include "onnx/onnx_model.h"
#include "opt/cost/analytic_cost.h"
#include "opt/search/optimize.h"
#include "support/shipped_library.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

using testing::optimize_small;
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

// Printed by name in test listings (not as raw bytes).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name << " at " << c.size << "x" << c.size;
}

class Torchvision : public ::testing::TestWithParam<Case> {};

// atol 1e-4 (ten times the check's default): float sums in another order over deep networks.
void expect_close(const HostTensor<float>& got, const HostTensor<float>& want,
                  const std::string& what) {
  Difference d = compare(got, want, {.rtol = 1e-4, .atol = 1e-4});
  EXPECT_TRUE(d.ok) << what << ": shapes " << shape_str(got.shape) << " and "
                    << shape_str(want.shape) << ", max abs diff " << d.max_abs << " (output scale "
                    << d.max_ref << ")";
}

// The share of the file's ONNX nodes kept opaque (issue 18 wants it under 5% per model),
// printed and recorded as the test property "opaque_share".
double opaque_share(const ImportedModel& m, const std::string& model) {
  int64_t nodes = 0;
  for (const auto& [op, n] : m.summary.onnx_op_counts) nodes += n;
  double share =
      nodes > 0 ? static_cast<double>(m.summary.opaque.size()) / static_cast<double>(nodes) : 0.0;
  ::testing::Test::RecordProperty("opaque_share", fmt::format("{:.4f}", share));
  std::map<std::string, int> by_op;
  for (const auto& o : m.summary.opaque) ++by_op[o.op_type];
  std::vector<std::string> parts;
  for (const auto& [op, n] : by_op) parts.push_back(fmt::format("{} x {}", n, op));
  fmt::print("[ opaque   ] {}: {} of {} ONNX nodes ({:.1f}%){}{}\n", model, m.summary.opaque.size(),
             nodes, 100 * share, parts.empty() ? "" : ": ", fmt::join(parts, ", "));
  return share;
}

TEST_P(Torchvision, ImportRunsLikeOnnxRuntimeAndExportRoundTrips) {
  const Case& c = GetParam();
  std::string path = torchvision_model(c.name, testing::sanitized() ? c.small_size : c.size);
  ImportedModel m = import_onnx_file(path);
  EXPECT_EQ(opaque_share(m, c.name), 0.0);
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
  opt::OptimizeResult r = optimize_small(m.graph, 40);
  EXPECT_LT(r.optimized.num_ops(), m.graph.num_ops());  // at least the activations fuse
  ResultCheck check = check_equivalent(m.graph, r.optimized,
                                       {.runs = 1, .seed = 5, .executor = CheckExecutor::Onednn});
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

// The classifiers of a modern torchvision (issue 18): each imports with no refusal (every
// shape computation evaluated at import), is optimized and checked, and the written model
// gives the original's outputs in ONNX Runtime (rtol 1e-4, atol 1e-5). Operators graphsub
// has no semantics for stay opaque; their share must stay under 5% of each model's nodes.
// The four models of the test above (resnet50, resnext50_32x4d, squeezenet1_1,
// inception_v3) complete the list of issue 18, there with no opaque node at all.
struct Classifier {
  const char* name;
  int size;  // input height and width: the smallest each model takes comfortably
};

void PrintTo(const Classifier& c, std::ostream* os) {
  *os << c.name << " at " << c.size << "x" << c.size;
}

class TorchvisionClassifiers : public ::testing::TestWithParam<Classifier> {};

TEST_P(TorchvisionClassifiers, ImportsWithShapesFoldedAndMatchesOnnxRuntime) {
  const Classifier& c = GetParam();
  std::string path = torchvision_model(c.name, c.size);
  ImportedModel m = import_onnx_file(path);
  EXPECT_LT(opaque_share(m, c.name), 0.05) << c.name << ": more than 5% of its nodes opaque";
  // No node is opaque because a shape, an index or a parameter is computed at run time.
  for (const auto& o : m.summary.opaque)
    EXPECT_EQ(o.reason.find("run time"), std::string::npos)
        << c.name << ": " << o.name << " (" << o.op_type << "): " << o.reason;
  EXPECT_GT(m.summary.folded, 0) << c.name << " has no shape computation?";

  opt::OptimizeResult r = optimize_small(m.graph, 10);
  ResultCheck check = check_equivalent(m.graph, r.optimized,
                                       {.runs = 1, .seed = 5, .executor = CheckExecutor::Onednn});
  EXPECT_TRUE(check.ok) << c.name << ": "
                        << fmt::format("{}", fmt::join(cut_summary_lines(check, m.graph), "; "));
  std::string out = scratch_dir("classifiers") + "/" + c.name + ".onnx";
  export_onnx_file(r.optimized, m.info.get(), out);
  std::string log;
  int rc = run_command(
      fmt::format("node {} {} {} --inputs 1 --time 0", tool("ort_crosscheck.js"), path, out), &log);
  EXPECT_EQ(rc, 0) << log;
}

INSTANTIATE_TEST_SUITE_P(
    Models, TorchvisionClassifiers,
    ::testing::Values(Classifier{"resnet18", 64}, Classifier{"mobilenet_v2", 64},
                      Classifier{"mobilenet_v3_large", 64}, Classifier{"efficientnet_b0", 64},
                      Classifier{"shufflenet_v2_x1_0", 64}, Classifier{"regnet_y_400mf", 64},
                      Classifier{"convnext_tiny", 64}, Classifier{"vit_b_16", 64},
                      Classifier{"densenet121", 64}, Classifier{"mnasnet1_0", 64},
                      Classifier{"googlenet", 64}),
    [](const auto& info) { return std::string(info.param.name); });

// Models exported with symbolic axes: optimized at 1, written with the same symbolic axes,
// and in ONNX Runtime the written model gives the original's outputs at 1 and at 4.
struct DynamicCase {
  const char* name;
  int size;
  std::vector<std::string> dims;  // symbolic dimensions of the input
};

void PrintTo(const DynamicCase& c, std::ostream* os) {
  *os << c.name << " at " << c.size << " with symbolic "
      << fmt::format("{}", fmt::join(c.dims, ", "));
}

class TorchDynamicAxes : public ::testing::TestWithParam<DynamicCase> {};

std::vector<std::string> dim_params(const onnx::ValueInfoProto& vi) {
  std::vector<std::string> r;
  for (const auto& d : vi.type().tensor_type().shape().dim())
    r.push_back(d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param());
  return r;
}

TEST_P(TorchDynamicAxes, SymbolicAxesAreKeptAndHoldAtTwoValues) {
  const DynamicCase& c = GetParam();
  std::string path = torchvision_model(c.name, c.size, true);
  ImportedModel m = import_onnx_file(path);
  ASSERT_EQ(m.info->symbolic.size(), c.dims.size());
  for (size_t p = 0; p < c.dims.size(); ++p) EXPECT_EQ(m.info->symbolic[p].name, c.dims[p]);
  ASSERT_EQ(m.alt_graphs.size(), c.dims.size());

  opt::OptimizeResult r = optimize_small(m.graph, 10);
  // The check at the imported values and at the other value of each symbolic dimension.
  EXPECT_TRUE(check_equivalent(m.graph, r.optimized,
                               {.runs = 1, .seed = 5, .executor = CheckExecutor::Onednn})
                  .ok);
  for (size_t p = 0; p < c.dims.size(); ++p) {
    Graph at = instantiate_symbolic(r.optimized, *m.info, p);
    EXPECT_TRUE(check_equivalent(m.alt_graphs[p], at,
                                 {.runs = 1, .seed = 5, .executor = CheckExecutor::Onednn})
                    .ok)
        << c.dims[p];
  }

  std::string out = scratch_dir("dynamic") + "/" + c.name + ".onnx";
  export_onnx_file(r.optimized, m.info.get(), out);
  onnx::ModelProto orig, written;
  {
    std::ifstream a(path, std::ios::binary), b(out, std::ios::binary);
    ASSERT_TRUE(orig.ParseFromIstream(&a));
    ASSERT_TRUE(written.ParseFromIstream(&b));
  }
  EXPECT_EQ(dim_params(written.graph().input(0)), dim_params(orig.graph().input(0)));
  EXPECT_EQ(dim_params(written.graph().output(0)), dim_params(orig.graph().output(0)));
  for (int dim : {1, 4}) {
    std::string log;
    int rc = run_command(fmt::format("node {} {} {} --inputs 1 --time 0 --dim {}",
                                     tool("ort_crosscheck.js"), path, out, dim),
                         &log);
    EXPECT_EQ(rc, 0) << "symbolic dimensions at " << dim << ":\n" << log;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, TorchDynamicAxes,
                         ::testing::Values(DynamicCase{"resnet18", 64, {"batch"}},
                                           DynamicCase{"transformer_encoder", 8, {"batch"}}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace graphsub
