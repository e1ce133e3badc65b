// The search's memory and work stay linear in the graph's size: queued graphs are patches
// that grow with the rewrites, not with the graph; a pattern of independent roots stops at
// its match limit instead of matching every pair of nodes; a rewrite's finish() and cycle
// check near the change give what the whole-graph passes give.
#include <gtest/gtest.h>

#include "driver/data_paths.h"
#include "ir/builder.h"
#include "ir/hash.h"
#include "opt/match/graph_hashing.h"
#include "opt/match/graph_index.h"
#include "opt/match/pattern.h"
#include "opt/search/search.h"
#include "opt/transforms/rewrite.h"
#include "opt/transforms/rule_transform.h"
#include "rules/rule_parser.h"
#include "support/overhead_cost.h"

namespace graphsub::opt {
namespace {

using testutil::OverheadCost;

Graph relu_chain(size_t n) {
  GraphBuilder b;
  auto t = b.input("x", {2, 8});
  for (size_t i = 0; i < n; ++i) t = b.relu(t);
  b.output("y", t);
  return b.finish();
}

std::vector<rules::Rule> parse(const std::string& text) {
  auto axioms = rules::load_rules(driver::shipped_axioms());
  return rules::parse_rules(text, "t.rules", &axioms).rules;
}

// A relu as a matmul with the identity (as costly under OverheadCost: every site is kept
// within alpha), and the same for two independent relus at once (every pair matches).
const char* kRules = R"(
(rule one (tensors ?a) (source (relu ?a)) (target (matmul relu ?a (imatmul))))
(rule pair (tensors ?a ?b) (source (relu ?a) (relu ?b))
  (target (matmul relu ?a (imatmul)) (matmul relu ?b (imatmul)))))";

TEST(OptSearchScaling, QueuedGraphsDoNotGrowWithTheGraph) {
  auto rs = parse(kRules);
  RuleTransform one(rs.at(0)), pair(rs.at(1));
  OverheadCost cost;
  SearchOptions o{.alpha = 1.05, .budget = 1, .max_queue = 500};
  auto small = search(relu_chain(1000), {&one, &pair}, cost, o, null_reporter());
  auto large = search(relu_chain(2000), {&one, &pair}, cost, o, null_reporter());
  ASSERT_EQ(small.peak_queue, 500u);  // the queue is full in both
  ASSERT_EQ(large.peak_queue, 500u);
  // Each queued graph differs from the input in a few nodes: the queue holds the same number
  // of node slots for twice the graph (whole graphs would hold 500 x 2,000 slots).
  EXPECT_GE(small.peak_queued_nodes, 500u);  // at least the new node of each
  EXPECT_LE(large.peak_queued_nodes, small.peak_queued_nodes + 16);
  EXPECT_LT(large.peak_queued_nodes, 500u * 8);
}

TEST(OptSearchScaling, IndependentRootsStopAtTheMatchLimit) {
  auto rs = parse(kRules);
  Pattern pair(rs.at(1));
  Graph g = relu_chain(5000);  // 12.5 million pairs without the limit
  GraphIndex ix(g);
  std::vector<Match> matches;
  EXPECT_EQ(pair.find(ix, matches), Pattern::match_limit(g.num_slots()));
  Pattern one(rs.at(0));
  EXPECT_EQ(one.find(ix, matches), 5000u);  // one root: one match per relu, not limited
}

// Replaces the relu feeding the output of x -> relu -> relu -> ewadd(second, first) by a new
// relu of x (a duplicate of the first relu, so it is shared) and compares both finish() paths.
TEST(OptSearchScaling, FinishNearTheChangeEqualsTheWholeGraphPass) {
  GraphBuilder b;
  auto x = b.input("x", {2, 8});
  auto r1 = b.relu(x);
  auto r2 = b.relu(r1);
  auto r3 = b.tanh(r2);
  b.output("y", b.ewadd(r3, r1));
  Graph g = b.finish();
  GraphIndex ix(g);
  auto apply = [&](Rewrite rw) {
    TensorRef n = {rw.graph().add("relu", {x}), 0};
    return std::move(rw).finish({{r2, n}});
  };
  auto whole = apply(Rewrite(g));
  auto near = apply(Rewrite(ix));
  ASSERT_TRUE(whole && near);
  EXPECT_EQ(structural_hash(*whole), structural_hash(*near));
  EXPECT_EQ(whole->num_nodes(), near->num_nodes());
  EXPECT_EQ(near->num_nodes(), g.num_nodes() - 1);  // r2 died; the new relu is r1 again
  EXPECT_LE(near->diff_from(g).nodes.size(), 3u);   // r2's slot, the new slot, tanh's edit
  EXPECT_EQ(g.patched(near->diff_from(g)).num_nodes(), near->num_nodes());
}

TEST(OptSearchScaling, CycleCheckNearTheChangeAgreesWithASort) {
  GraphBuilder b;
  auto x = b.input("x", {2, 8});
  auto r1 = b.relu(x);
  auto r2 = b.tanh(r1);
  auto r3 = b.relu(r2);
  b.output("y", r3);
  Graph g = b.finish();
  GraphIndex ix(g);
  std::vector<NodeId> order;
  ASSERT_TRUE(topological_order(g, order));
  std::vector<uint32_t> position(g.num_slots(), 0);
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<uint32_t>(i);

  Graph cyclic = g;  // r1 reads r3, which reads r1
  cyclic.set_inputs(r1.node, {r3});
  EXPECT_FALSE(rewrite_acyclic(ix, position, cyclic, order));
  EXPECT_FALSE(topological_order(cyclic, order));

  Graph fine = g;  // r3 reads r1 directly: tanh is left unread, still acyclic
  fine.set_inputs(r3.node, {r1});
  EXPECT_TRUE(rewrite_acyclic(ix, position, fine, order));
  EXPECT_TRUE(topological_order(fine, order));

  Graph dangling = g;  // tanh removed while r3 still reads it
  dangling.remove(r2.node);
  EXPECT_FALSE(rewrite_acyclic(ix, position, dangling, order));
}

}  // namespace
}  // namespace graphsub::opt
