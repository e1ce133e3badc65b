// The root candidate index: GraphIndex::candidates lists exactly the nodes that pass a root
// filter's stateless tests (operator, output, arity, literal parameters of the root and of its
// operator arguments), filters with equal tests share one interned id, and patterns matched
// through the index find the matches their literals and argument operators allow.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "driver/data_paths.h"
#include "ir/builder.h"
#include "opt/match/graph_index.h"
#include "opt/match/root_filter.h"
#include "opt/transforms/rule_transform.h"
#include "rules/rule_parser.h"

namespace graphsub::opt {
namespace {

struct Net {
  Graph g;
  NodeId c1 = 0, c2 = 0, c3 = 0, c4 = 0;  // conv stride 1 on x, stride 2 on x, on a concat, relu
};

Net net() {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 8, 8});
  auto c1 = b.conv(x, b.weight("w1", {4, 4, 3, 3}), {.stride = 1, .pad = 1});
  auto c2 = b.conv(x, b.weight("w2", {4, 4, 3, 3}), {.stride = 2, .pad = 1});
  auto cat = b.concat(1, {c1, b.relu(c1)});
  auto c3 = b.conv(cat, b.weight("w3", {4, 8, 1, 1}));
  auto c4 = b.conv(c3, b.weight("w4", {4, 4, 1, 1}), {.act = "relu"});
  b.output("a", c2);
  b.output("b", c4);
  Net n;
  n.g = b.finish();
  n.c1 = c1.node, n.c2 = c2.node, n.c3 = c3.node, n.c4 = c4.node;
  return n;
}

NodeTest conv_test(std::vector<std::pair<uint32_t, AxiomParam>> literals) {
  return {&op_def("conv"), 0, 2, 3, std::move(literals)};
}

// The nodes of every operator that pass the filter, found without the index.
std::vector<NodeId> brute_force(const GraphIndex& ix, const RootFilter& f) {
  std::vector<NodeId> out;
  const Graph& g = ix.graph();
  for (NodeId id = 0; id < g.num_slots(); ++id) {
    if (!g.alive(id) || f.root.output >= g.node(id).outputs.size() ||
        !ix.passes(f.root, {id, f.root.output}))
      continue;
    bool ok = true;
    for (size_t i = 0; i < f.args.size(); ++i)
      ok = ok && (!f.args[i] || ix.passes(*f.args[i], g.node(id).inputs[i]));
    if (ok) out.push_back(id);
  }
  return out;
}

TEST(OptRootIndex, CandidatesAreTheNodesThatPassTheFilter) {
  Net n = net();
  GraphIndex ix(n.g);
  NodeTest concat{&op_def("concat"), 0, 2, 1, {{0, AxiomParam{int64_t{1}}}}};
  struct Case {
    RootFilter f;
    std::vector<NodeId> want;
  };
  std::vector<Case> cases = {
      {make_root_filter(conv_test({}), {}), {n.c1, n.c2, n.c3, n.c4}},
      {make_root_filter(conv_test({{0, AxiomParam{int64_t{1}}}}), {}), {n.c1, n.c3, n.c4}},
      {make_root_filter(conv_test({{0, AxiomParam{int64_t{2}}}}), {}), {n.c2}},
      {make_root_filter(conv_test({{2, AxiomParam{std::string("relu")}}}), {}), {n.c4}},
      {make_root_filter(conv_test({}), {concat, std::nullopt}), {n.c3}},
      // Axis 0 is not what the graph's concat has.
      {make_root_filter(
           conv_test({}),
           {NodeTest{&op_def("concat"), 0, 2, 1, {{0, AxiomParam{int64_t{0}}}}}, std::nullopt}),
       {}},
      {make_root_filter(conv_test({}), {conv_test({}), std::nullopt}), {n.c4}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(ix.candidates(cases[i].f), cases[i].want);
    EXPECT_EQ(ix.candidates(cases[i].f), brute_force(ix, cases[i].f));
  }
  // Asked again in any order, the kept lists stay the same.
  for (size_t i = cases.size(); i-- > 0;) EXPECT_EQ(ix.candidates(cases[i].f), cases[i].want);
}

TEST(OptRootIndex, EqualFiltersShareAnId) {
  auto a = make_root_filter(conv_test({{0, AxiomParam{int64_t{1}}}}), {});
  auto b = make_root_filter(conv_test({{0, AxiomParam{int64_t{1}}}}), {});
  auto c = make_root_filter(conv_test({{0, AxiomParam{int64_t{2}}}}), {});
  auto d =
      make_root_filter(conv_test({{0, AxiomParam{int64_t{1}}}}), {conv_test({}), std::nullopt});
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.id, a.root_id);  // no argument tested: the root's list itself
  EXPECT_NE(a.id, c.id);
  EXPECT_EQ(d.root_id, a.id);
  EXPECT_NE(d.id, a.id);
  // A symbol and an integer of the same text are different literals.
  auto s = make_root_filter(conv_test({{0, AxiomParam{std::string("1")}}}), {});
  EXPECT_NE(s.id, a.id);
}

TEST(OptRootIndex, OperatorSetsTellWhichOperatorsAGraphHas) {
  Net n = net();
  GraphIndex ix(n.g);
  EXPECT_TRUE(ix.has_op(&op_def("conv")));
  EXPECT_TRUE(ix.has_op(&op_def("concat")));
  EXPECT_FALSE(ix.has_op(&op_def("matmul")));
  std::set<std::string> ops;
  for (NodeId id = 0; id < n.g.num_slots(); ++id)
    if (n.g.alive(id)) ops.insert(n.g.node(id).op->name);
  EXPECT_EQ(ix.op_set().count(), ops.size());
}

const rules::RuleSet& axioms() {
  static const rules::RuleSet a = rules::load_rules(driver::shipped_axioms());
  return a;
}

std::vector<std::string> matched_roots(const std::string& text, const Graph& g) {
  auto rs = rules::parse_rules(text, "test.rules", &axioms());
  RuleTransform t(rs.rules.at(0));
  GraphIndex ix(g);
  std::vector<std::string> out;
  apply_everywhere(t, ix, [&](Candidate&& c) { out.push_back(c.where); });
  return out;
}

TEST(OptRootIndex, PatternsMatchThroughTheIndex) {
  Net n = net();
  // Stride 1, any padding, no activation, reading a concat along axis 1: only c3.
  auto a = matched_roots(R"((rule r (tensors ?a ?c ?b) (params (?p padding))
      (source (conv 1 ?p none (concat 1 ?a ?c) ?b))
      (target (conv 1 ?p none (concat 1 ?a ?c) ?b))))",
                         n.g);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_NE(a[0].find("'w3'"), std::string::npos) << a[0];
  // Stride 2 with no activation: c2; with relu: none.
  auto b = matched_roots(R"((rule r (tensors ?x ?w) (params (?p padding))
      (source (conv 2 ?p none ?x ?w)) (target (conv 2 ?p none ?x ?w))))",
                         n.g);
  EXPECT_EQ(b.size(), 1u);
  auto c = matched_roots(R"((rule r (tensors ?x ?w) (params (?p padding))
      (source (conv 2 ?p relu ?x ?w)) (target (conv 2 ?p relu ?x ?w))))",
                         n.g);
  EXPECT_EQ(c.size(), 0u);
  // A relu conv reading a conv without activation: c4 reading c3.
  auto d = matched_roots(R"((rule r (tensors ?x ?w ?v) (params (?p padding) (?q padding))
      (source (conv 1 ?p relu (conv 1 ?q none ?x ?w) ?v))
      (target (conv 1 ?p relu (conv 1 ?q none ?x ?w) ?v))))",
                         n.g);
  EXPECT_EQ(d.size(), 1u);
}

}  // namespace
}  // namespace graphsub::opt
