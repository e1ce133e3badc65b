// Transforms as a searcher and an applier (opt/transform.h): a match that is not an
// application comes back as a failed-match value with a reason, and the search alone prices
// and admits applications: a transform sees no cost model, and the graphs of refused
// applications are never built.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/data_paths.h"
#include "ir/builder.h"
#include "opt/search/search.h"
#include "opt/transforms/rule_transform.h"
#include "opt/transforms/transform.h"
#include "rules/rule_parser.h"
#include "support/overhead_cost.h"

namespace graphsub::opt {
namespace {

const rules::RuleSet& axioms() {
  static const rules::RuleSet a = rules::load_rules(driver::shipped_axioms());
  return a;
}

// Swaps a matmul's operands: it type-checks only for square operands.
const char* kSwapMatmul = R"(
(rule swap-matmul "not an equality: its target does not type-check on most matches"
  (tensors ?x ?y) (params (?c act))
  (source (matmul ?c ?x ?y))
  (target (matmul ?c ?y ?x)))
)";

TEST(OptTransform, TargetThatDoesNotTypeCheckIsAFailedMatchWithItsReason) {
  auto rs = rules::parse_rules(kSwapMatmul, "test.rules", &axioms());
  ASSERT_EQ(rs.rules.size(), 1u);
  RuleTransform t(rs.rules[0]);
  GraphBuilder b;
  b.output("y", b.matmul(b.input("x", {2, 4}), b.weight("w", {4, 3})));
  Graph g = b.finish();
  GraphIndex ix(g);
  std::vector<Match> matches;
  ASSERT_EQ(t.find(ix, matches), 1u);
  for (int attempt = 0; attempt < 2; ++attempt) {  // the second answer comes from the memo
    Rewrite rw(ix);
    std::vector<Replacement> reps;
    Builder built(rw, reps);
    Outcome o = t.apply(ix, matches[0], built);
    ASSERT_FALSE(o);
    EXPECT_NE(o.reason().find("matmul: inner sizes"), std::string::npos) << o.reason();
    EXPECT_TRUE(reps.empty());
  }
  Result<Graph> r = build_application(t, ix, matches[0]);
  ASSERT_FALSE(r);
  EXPECT_NE(r.reason().find("inner sizes"), std::string::npos) << r.reason();
  size_t emitted = 0;
  apply_everywhere(t, ix, [&](Candidate&&) { ++emitted; });
  EXPECT_EQ(emitted, 0u);
}

// Matches every relu. The relu reading input `cheap` is replaced by its input (one operator
// less); any other by tanh(tanh(x)) (one more), or, when `mistyped`, by a tensor of another
// shape. Counts how often its applier is asked, per match.
class ReluTransform : public Transform {
 public:
  explicit ReluTransform(bool mistyped = false) : mistyped_(mistyped) {}
  const std::string& name() const override { return name_; }
  std::string origin() const override { return "test"; }
  size_t find(const GraphIndex& ix, std::vector<Match>& out) const override {
    size_t count = 0;
    for (NodeId id : ix.nodes_of("relu")) {
      Match& m = next_match(out, count);
      m.vars = {ix.graph().node(id).inputs[0]};
      m.outputs = {TensorRef{id, 0}};
      m.internal = {id};
    }
    return count;
  }
  Outcome apply(const GraphIndex& ix, const Match& m, Builder& b) const override {
    calls.resize(std::max(calls.size(), m.internal[0] + size_t{1}));
    ++calls[m.internal[0]];
    TensorRef x = m.vars[0];
    if (ix.graph().node(x.node).name == "cheap") {
      b.replace(m.outputs[0], x);
    } else if (mistyped_) {
      b.replace(m.outputs[0], ix.graph().outputs().back().ref);
    } else {
      Result<TensorRef> t1 = b.add("tanh", {x});
      if (!t1) return t1.failure();
      Result<TensorRef> t2 = b.add("tanh", {*t1});
      if (!t2) return t2.failure();
      b.replace(m.outputs[0], *t2);
    }
    return Applied{};
  }
  std::string where(const GraphIndex& ix, const Match& m) const override {
    return node_label(ix.graph(), m.internal[0]);
  }

  mutable std::vector<size_t> calls;  // per relu node id

 private:
  std::string name_ = "relu-test";
  bool mistyped_;
};

struct TwoRelus {
  Graph g;
  NodeId cheap_relu, dear_relu;
};

TwoRelus two_relus() {
  GraphBuilder b;
  auto cheap = b.relu(b.input("cheap", {2, 4}));
  auto dear = b.relu(b.input("dear", {2, 4}));
  b.output("a", b.sigmoid(cheap));
  b.output("b", b.sigmoid(dear));
  b.output("c", b.input("other", {3, 3}));
  return {b.finish(), cheap.node, dear.node};
}

TEST(OptTransform, SearchPricingDecidesWhichApplicationsAreBuilt) {
  TwoRelus t = two_relus();
  ReluTransform relu;
  testutil::OverheadCost cost;
  // Greedy, one graph expanded: the cheaper application is admitted and built (its applier is
  // asked to describe it, then to build it); the dearer one is priced, refused and never built.
  auto r = search(t.g, {&relu}, cost, {.alpha = 1.0, .budget = 1}, null_reporter());
  EXPECT_EQ(r.expanded, 1u);
  EXPECT_EQ(r.generated, 2u);
  EXPECT_EQ(r.kept, 1u);
  ASSERT_GT(relu.calls.size(), std::max(t.cheap_relu, t.dear_relu));
  EXPECT_EQ(relu.calls[t.cheap_relu], 2u);
  EXPECT_EQ(relu.calls[t.dear_relu], 1u);
  EXPECT_LT(r.best_cost, r.initial_cost);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].ordinal, t.cheap_relu < t.dear_relu ? 0u : 1u);
  // With room for dearer graphs (alpha 2), both are built.
  ReluTransform lenient;
  auto l = search(t.g, {&lenient}, cost, {.alpha = 2.0, .budget = 1}, null_reporter());
  EXPECT_EQ(l.kept, 2u);
  EXPECT_EQ(lenient.calls[t.dear_relu], 2u);
}

TEST(OptTransform, ReplacementOfAnotherTypeIsRefusedBeforeAndAfterBuilding) {
  TwoRelus t = two_relus();
  ReluTransform relu(true);
  GraphIndex ix(t.g);
  std::vector<Match> matches;
  ASSERT_EQ(relu.find(ix, matches), 2u);
  size_t mistyped = t.cheap_relu < t.dear_relu ? 1 : 0;
  Result<Graph> r = build_application(relu, ix, matches[mistyped]);
  ASSERT_FALSE(r);
  EXPECT_NE(r.reason().find("type differs"), std::string::npos) << r.reason();
  EXPECT_TRUE(build_application(relu, ix, matches[1 - mistyped]));
  testutil::OverheadCost cost;
  auto s = search(t.g, {&relu}, cost, {.alpha = 2.0, .budget = 1}, null_reporter());
  EXPECT_EQ(s.generated, 1u);  // the mistyped one has no price, so it is not even offered
  EXPECT_EQ(s.kept, 1u);
}

}  // namespace
}  // namespace graphsub::opt
