// The backtracking search: it finds the matmul merges in a small NasRNN, respects its budget,
// time limit and queue bound, is deterministic, and its incremental canonical hashes and
// replayed steps agree with recomputing from scratch.
#include <gtest/gtest.h>

#include <set>

#include "check/equivalence.h"
#include "core/error.h"
#include "driver/data_paths.h"
#include "ir/builder.h"
#include "ir/hash.h"
#include "models/models.h"
#include "opt/match/graph_hashing.h"
#include "opt/match/graph_index.h"
#include "opt/search/search.h"
#include "opt/transforms/rule_library.h"
#include "opt/transforms/rule_transform.h"
#include "rules/rule_parser.h"
#include "support/overhead_cost.h"

namespace graphsub::opt {
namespace {

using testutil::OverheadCost;

RuleLibrary library() {
  RuleLibraryOptions o;
  o.rule_files = {std::string(GRAPHSUB_SOURCE_DIR) + "/rules/merges.rules"};
  return RuleLibrary(o, null_reporter());
}

size_t count_op(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (NodeId id = 0; id < g.num_slots(); ++id) n += g.alive(id) && g.node(id).op->name == op;
  return n;
}

TEST(OptSearch, MergesTheMatmulsOfASmallNasRnn) {
  Graph g = nasrnn(true, 16, 2);
  auto lib = library();
  OverheadCost cost;
  SearchResult r =
      search(g, lib.transforms(), cost, {.alpha = 1.0, .budget = 200}, null_reporter());
  EXPECT_LT(r.best_cost, r.initial_cost);
  // Step 1 reads the initial state, a weight: its h*W2 matmuls are weight expressions (free),
  // so only step 2's eight sums of two matmuls merge.
  EXPECT_EQ(count_op(r.best, "matmul"), count_op(g, "matmul") - 8);
  EXPECT_FALSE(r.steps.empty());
  auto c = check_equivalent(g, r.best, {.seed = 4});
  EXPECT_TRUE(c.ok) << c.failure();
  EXPECT_EQ(r.best.outputs().size(), g.outputs().size());
  EXPECT_EQ(r.best.outputs()[0].name, g.outputs()[0].name);
}

TEST(OptSearch, IsDeterministic) {
  Graph g = nasrnn(true, 16, 2);
  auto lib = library();
  OverheadCost c1, c2;
  auto a = search(g, lib.transforms(), c1, {.budget = 40}, null_reporter());
  auto b = search(g, lib.transforms(), c2, {.budget = 40}, null_reporter());
  EXPECT_EQ(structural_hash(a.best), structural_hash(b.best));
  EXPECT_EQ(a.best_cost, b.best_cost);
  EXPECT_EQ(a.generated, b.generated);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].rule, b.steps[i].rule);
    EXPECT_EQ(a.steps[i].where, b.steps[i].where);
  }
}

TEST(OptSearch, ReturnsDistinctRunnersUpCheapestFirst) {
  Graph g = nasrnn(true, 16, 2);
  auto lib = library();
  OverheadCost cost;
  SearchOptions o{.budget = 40};
  o.finalists = 4;
  SearchResult r = search(g, lib.transforms(), cost, o, null_reporter());
  ASSERT_EQ(r.runners_up.size(), 3u);
  std::set<uint64_t> hashes = {structural_hash(r.best), structural_hash(g)};
  double previous = r.best_cost;
  for (const RunnerUp& u : r.runners_up) {
    EXPECT_TRUE(hashes.insert(structural_hash(u.graph)).second) << "a runner-up repeats a graph";
    EXPECT_GE(u.cost, previous * (1 - 1e-9));  // cheapest first, none cheaper than the best
    EXPECT_LT(u.cost, r.initial_cost);
    previous = u.cost;
    auto c = check_equivalent(g, u.graph, {.seed = 2});
    EXPECT_TRUE(c.ok) << c.failure();
  }
  // The best is the same as without runners-up: keeping them changes nothing else.
  OverheadCost again;
  SearchResult plain = search(g, lib.transforms(), again, {.budget = 40}, null_reporter());
  EXPECT_EQ(structural_hash(plain.best), structural_hash(r.best));
  EXPECT_TRUE(plain.runners_up.empty());
}

TEST(OptSearch, RespectsBudgetTimeLimitAndQueueBound) {
  Graph g = nasrnn(true, 16, 3);
  auto lib = library();
  OverheadCost cost;
  auto r = search(g, lib.transforms(), cost, {.budget = 7, .max_queue = 5}, null_reporter());
  EXPECT_EQ(r.expanded, 7u);
  EXPECT_EQ(r.stopped_by, "budget");
  EXPECT_LE(r.peak_queue, 5u);
  EXPECT_GT(r.dropped, 0u);
  auto t =
      search(g, lib.transforms(), cost, {.budget = 100000, .time_limit_s = 1e-9}, null_reporter());
  EXPECT_EQ(t.stopped_by, "time limit");
  EXPECT_LE(t.expanded, 1u);
}

TEST(OptSearch, DeduplicatesByCanonicalHash) {
  // Commuting ewadd's operands twice gives back a graph already expanded: it is skipped.
  auto axioms = rules::load_rules(driver::shipped_axioms());
  auto rs = rules::parse_rules(R"((rule comm (tensors ?x ?y)
      (source (ewadd ?x ?y)) (target (ewadd ?y ?x))))",
                               "t.rules", &axioms);
  RuleTransform comm(rs.rules.at(0));
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  b.output("y", b.ewadd(b.relu(x), b.tanh(x)));
  Graph g = b.finish();
  OverheadCost cost;
  auto r = search(g, {&comm}, cost, {.alpha = 1.05, .budget = 50}, null_reporter());
  EXPECT_EQ(r.expanded, 2u);  // the input and its one commuted form
  EXPECT_GE(r.duplicates, 1u);
  EXPECT_EQ(r.stopped_by, "exhausted");
  EXPECT_GE(r.cpu_seconds, 0);
}

// Prices tanh at 10 and sigmoid at 10 - delta, anything else at 1.
class NearTieCost : public CostModel {
 public:
  explicit NearTieCost(double delta) : delta_(delta) {}
  std::string name() const override { return "test"; }
  std::string assumptions() const override { return "near tie"; }

 protected:
  double config_cost(const OpConfig& c) override {
    return c.op->name == "tanh" ? 10 : c.op->name == "sigmoid" ? 10 - delta_ : 1;
  }

 private:
  double delta_;
};

// A rewrite cheaper only by rounding noise (a relative 1e-12) does not replace the best graph,
// so the result reports no rule for it; one that saves a tenth does.
TEST(OptSearch, CostTiesWithinRoundingKeepTheInput) {
  auto axioms = rules::load_rules(driver::shipped_axioms());
  auto rs = rules::parse_rules(R"((rule t2s (tensors ?x)
      (source (tanh ?x)) (target (sigmoid ?x))))",
                               "t.rules", &axioms);
  RuleTransform t2s(rs.rules.at(0));
  GraphBuilder b;
  b.output("y", b.relu(b.tanh(b.input("x", {2, 3}))));
  Graph g = b.finish();
  NearTieCost noise(1e-11), real(1);
  auto kept = search(g, {&t2s}, noise, {.budget = 10}, null_reporter());
  EXPECT_TRUE(kept.steps.empty());
  EXPECT_EQ(structural_hash(kept.best), structural_hash(g));
  EXPECT_EQ(kept.expanded, 2u);  // the rewritten graph was still explored
  auto taken = search(g, {&t2s}, real, {.budget = 10}, null_reporter());
  ASSERT_EQ(taken.steps.size(), 1u);
  EXPECT_EQ(taken.steps[0].rule, "t2s");
}

// Prices a runtime's fused operators at 1 and everything else at 10, for a target standing
// for runtime `rt` ("" : graphsub's own executor).
class RuntimeCost : public CostModel {
 public:
  explicit RuntimeCost(std::string rt) : rt_(std::move(rt)) {}
  std::string name() const override { return "test"; }
  std::string assumptions() const override { return "runtime " + rt_; }
  std::string_view runtime() const override { return rt_; }

 protected:
  double config_cost(const OpConfig& c) override { return c.op->runtime.empty() ? 10 : 1; }

 private:
  std::string rt_;
};

// gelu(add(x, b)) -> ONNX Runtime's BiasGelu is cheaper for the ort target only: for another
// target the fused operator costs kNotRunHere, and the search leaves the graph as it is.
TEST(OptSearch, ARuntimesFusedOperatorIsIntroducedOnlyForATargetThatRunsIt) {
  auto axioms = rules::load_rules(driver::shipped_axioms());
  auto rs = rules::parse_rules(R"((rule bias-gelu (tensors ?x ?b)
      (source (gelu (add ?x ?b))) (target (ort_bias_gelu ?x ?b))))",
                               "t.rules", &axioms);
  RuleTransform fuse(rs.rules.at(0));
  GraphBuilder b;
  b.output("y", b.op("gelu", {b.op("add", {b.input("x", {2, 8}), b.input("b", {8})})}));
  Graph g = b.finish();
  RuntimeCost ort_target("onnxruntime"), other("");
  auto taken = search(g, {&fuse}, ort_target, {.budget = 10}, null_reporter());
  ASSERT_EQ(taken.steps.size(), 1u);
  EXPECT_EQ(taken.steps[0].rule, "bias-gelu");
  auto kept = search(g, {&fuse}, other, {.budget = 10}, null_reporter());
  EXPECT_TRUE(kept.steps.empty());
  EXPECT_EQ(structural_hash(kept.best), structural_hash(g));
  EXPECT_GE(other.graph_cost(taken.best), CostModel::kNotRunHere);
}

TEST(OptSearch, StopsWhenNothingIsLeft) {
  Graph g = demo_model();
  std::vector<const Transform*> none;
  OverheadCost cost;
  auto r = search(g, none, cost, {}, null_reporter());
  EXPECT_EQ(r.stopped_by, "exhausted");
  EXPECT_EQ(r.expanded, 1u);
  EXPECT_EQ(structural_hash(r.best), structural_hash(g));
  EXPECT_TRUE(r.steps.empty());
}

TEST(OptSearch, ReplayReproducesTheResult) {
  Graph g = nasrnn(true, 16, 2);
  auto lib = library();
  OverheadCost cost;
  auto r = search(g, lib.transforms(), cost, {.alpha = 1.0, .budget = 60}, null_reporter());
  ASSERT_FALSE(r.steps.empty());
  auto graphs = replay_steps(g, lib.transforms(), r.steps, r.steps.size());
  ASSERT_EQ(graphs.size(), r.steps.size());
  EXPECT_EQ(structural_hash(graphs.back()), structural_hash(r.best));
  auto bad = r.steps;
  bad[0].ordinal = 1u << 30;
  EXPECT_THROW(replay_steps(g, lib.transforms(), bad, 1), Error);
}

TEST(OptSearch, IncrementalHashesEqualTheCanonicalOnes) {
  Graph g = nasrnn(true, 8, 2);
  auto lib = library();
  auto base = node_hashes(g);
  GraphIndex ix(g);
  size_t checked = 0;
  for (const Transform* t : lib.transforms()) {
    apply_everywhere(*t, ix, [&](Candidate&& c) {
      std::vector<NodeId> order;
      ASSERT_TRUE(topological_order(c.graph, order));
      auto inc = child_node_hashes(g, base, c.graph, order);
      auto full = node_hashes(c.graph);
      for (NodeId id = 0; id < c.graph.num_slots(); ++id) {
        if (c.graph.alive(id)) {
          ASSERT_EQ(inc[id], full[id]) << c.graph.describe(id);
        }
      }
      EXPECT_EQ(graph_hash(c.graph, inc), structural_hash(c.graph));
      ++checked;
    });
  }
  EXPECT_GT(checked, 10u);
}

TEST(OptSearch, TopologicalOrderFindsCycles) {
  Graph g = demo_model();
  std::vector<NodeId> order;
  ASSERT_TRUE(topological_order(g, order));
  EXPECT_EQ(order.size(), g.num_nodes());
  // Make the first relu read its own consumer: a cycle.
  NodeId relu = 0, later = 0;
  for (NodeId id = 0; id < g.num_slots(); ++id) {
    if (!g.alive(id)) continue;
    if (g.node(id).op->name == "relu" && !relu) relu = id;
  }
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id) && !g.node(id).inputs.empty() && g.node(id).inputs[0].node == relu) later = id;
  ASSERT_NE(relu, 0u);
  ASSERT_NE(later, 0u);
  g.set_inputs(relu, {{later, 0}});
  EXPECT_FALSE(topological_order(g, order));
}

}  // namespace
}  // namespace graphsub::opt
