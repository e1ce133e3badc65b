// optimize_graph end to end: search, weight pre-computation and the numerical check; an
// unsound rule is caught and named; rules can be disabled by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "driver/data_paths.h"
#include "ir/builder.h"
#include "models/models.h"
#include "opt/cost/analytic_cost.h"
#include "opt/match/graph_index.h"
#include "opt/search/optimize.h"
#include "support/shipped_library.h"

namespace graphsub::opt {
namespace {

AnalyticCostModel overhead_bound_machine() {
  // A machine where launching an operator dominates: merging pays off, as on TASO's GPU.
  return AnalyticCostModel({.cpu = "test",
                            .isa = "any",
                            .threads = 1,
                            .peak_gflops = 1000,
                            .bandwidth_gbs = 1000,
                            .op_overhead_us = 10});
}

OptimizeOptions options() {
  OptimizeOptions o;
  o.search.budget = 100;
  o.search.alpha = 1.0;
  return o;
}

// The rule files of the source tree (none: the shipped library), minus `disabled`.
RuleLibrary library(const std::vector<std::string>& files,
                    const std::vector<std::string>& disabled = {}) {
  RuleLibraryOptions o;
  for (auto& f : files) o.rule_files.push_back(std::string(GRAPHSUB_SOURCE_DIR) + "/" + f);
  o.disabled = disabled;
  return RuleLibrary(driver::resolved(o), null_reporter());
}

std::string write_temp(const std::string& name, const std::string& text) {
  auto p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}

TEST(OptOptimize, OptimizesChecksAndFoldsWeights) {
  Graph g = nasrnn(true, 16, 2);
  auto cost = overhead_bound_machine();
  auto r = optimize_graph(g, options(), library({"rules/merges.rules"}), cost, null_reporter());
  EXPECT_TRUE(r.checked);
  EXPECT_TRUE(r.check.ok);
  EXPECT_LT(r.final_cost, r.initial_cost);
  EXPECT_GT(r.rules_applied["merge-matmul-sum"], 0u);
  EXPECT_GT(r.folded, 0u);  // concatenated weights became weights
  EXPECT_LT(r.optimized.num_ops(), g.num_ops());
  auto constant = constant_nodes(r.optimized);
  for (NodeId id = 0; id < r.optimized.num_slots(); ++id) {
    if (r.optimized.alive(id) && !r.optimized.node(id).is_source()) {
      EXPECT_FALSE(constant[id]) << "weight expression left: " << r.optimized.describe(id);
    }
  }
  EXPECT_EQ(r.cost_model, "analytic");
  EXPECT_NO_THROW(validate(r.optimized));
}

TEST(OptOptimize, BuiltinRulesFuseAndFoldBatchnorm) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 8, 8});
  auto c = b.conv(x, b.weight("w", {8, 3, 3, 3}), {.pad = 1});
  b.output("y", b.relu(b.batchnorm(c, "bn")));
  Graph g = b.finish();
  auto cost = overhead_bound_machine();
  auto r = optimize_graph(g, options(), testutil::shipped_library(), cost, null_reporter());
  EXPECT_EQ(r.optimized.num_ops(), 1u);  // conv with the batchnorm folded and relu fused
  EXPECT_EQ(r.rules_applied["fold-batchnorm"], 1u);
  EXPECT_EQ(r.rules_applied["fuse-activation-conv"], 1u);
  EXPECT_TRUE(r.check.ok);
}

TEST(OptOptimize, AnUnsoundRuleIsCaughtAndNamed) {
  std::string file = write_temp("graphsub-unsound.rules", R"(
(rule drop-tanh "false: tanh is not the identity" (tensors ?x)
  (source (tanh ?x)) (target ?x))
)");
  Graph g = nasrnn(true, 8, 1);
  OptimizeOptions o;
  o.search.budget = 20;
  auto cost = overhead_bound_machine();
  RuleLibrary lib(RuleLibraryOptions{.rule_files = {file}}, null_reporter());
  try {
    optimize_graph(g, o, lib, cost, null_reporter());
    FAIL() << "the check should have failed";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("does not match"), std::string::npos) << msg;
    EXPECT_NE(msg.find("drop-tanh"), std::string::npos) << msg;
    EXPECT_NE(msg.find("first differ after application 1"), std::string::npos) << msg;
  }
}

TEST(OptOptimize, DisabledRulesAreNotApplied) {
  Graph g = nasrnn(true, 16, 2);
  auto cost = overhead_bound_machine();
  auto r = optimize_graph(
      g, options(), library({"rules/merges.rules"}, {"merge-matmul-sum", "fuse-activation-matmul"}),
      cost, null_reporter());
  EXPECT_EQ(r.rules_applied.count("merge-matmul-sum"), 0u);
  EXPECT_EQ(r.rules_applied.count("fuse-activation-matmul"), 0u);
  EXPECT_THROW(library({"rules/merges.rules"}, {"no-such-rule"}), Error);
}

TEST(OptOptimize, InvalidInputGraphIsAnError) {
  Graph g = demo_model();
  g.set_inputs(g.outputs()[0].ref.node, {{9999, 0}});
  auto cost = overhead_bound_machine();
  EXPECT_THROW(optimize_graph(g, options(), testutil::builtin_library(), cost, null_reporter()),
               Error);
}

}  // namespace
}  // namespace graphsub::opt
