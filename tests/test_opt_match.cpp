// Matching rule sources in graphs and rewriting: multi-operator and multi-output patterns,
// parameter and shape constraints, split points, escaping internal tensors, type errors,
// cycles, and graph outputs.
#include <gtest/gtest.h>

#include "check/equivalence.h"
#include "core/error.h"
#include "driver/data_paths.h"
#include "exec/reference_executor.h"
#include "ir/builder.h"
#include "ir/print.h"
#include "opt/match/graph_index.h"
#include "opt/transforms/rewrite.h"
#include "opt/transforms/rule_transform.h"
#include "rules/rule_parser.h"

namespace graphsub::opt {
namespace {

const rules::RuleSet& axioms() {
  static const rules::RuleSet a = rules::load_rules(driver::shipped_axioms());
  return a;
}

RuleTransform rule(const std::string& text) {
  auto rs = rules::parse_rules(text, "test.rules", &axioms());
  EXPECT_EQ(rs.rules.size(), 1u);
  return RuleTransform(rs.rules.at(0));
}

std::vector<Candidate> apply(const Transform& t, const Graph& g) {
  GraphIndex ix(g);
  std::vector<Candidate> out;
  apply_everywhere(t, ix, [&](Candidate&& c) { out.push_back(std::move(c)); });
  return out;
}

size_t count_op(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (NodeId id = 0; id < g.num_slots(); ++id) n += g.alive(id) && g.node(id).op->name == op;
  return n;
}

const char* kMergeMatmuls = R"(
(rule merge-matmuls "two matmuls sharing their left operand"
  (tensors ?x ?y ?z) (params (?c act))
  (source (matmul ?c ?x ?y) (matmul ?c ?x ?z))
  (target (split0 1 (matmul ?c ?x (concat 1 ?y ?z)))
          (split1 1 (matmul ?c ?x (concat 1 ?y ?z)))))
)";

TEST(OptMatch, MultiOutputRuleMergesMatmulsSharingAnOperand) {
  GraphBuilder b;
  auto x = b.input("x", {2, 4});
  auto m1 = b.matmul(x, b.weight("w1", {4, 3}));
  auto m2 = b.matmul(x, b.weight("w2", {4, 5}));
  auto other = b.matmul(b.input("z", {2, 4}), b.weight("w3", {4, 3}));  // different left operand
  b.output("a", b.relu(m1));
  b.output("b", m2);
  b.output("c", other);
  Graph g = b.finish();
  auto cands = apply(rule(kMergeMatmuls), g);
  // (m1, m2) and its mirror (m2, m1) are the same rewrite: the outputs are interchangeable,
  // so only the match with ascending tensors is emitted.
  ASSERT_EQ(cands.size(), 1u);
  const Graph& r = cands[0].graph;
  EXPECT_EQ(count_op(r, "matmul"), 2u);
  EXPECT_EQ(count_op(r, "split"), 1u);
  EXPECT_EQ(count_op(r, "concat"), 1u);
  ASSERT_EQ(r.outputs().size(), 3u);  // graph outputs intact, by name and order
  EXPECT_EQ(r.outputs()[1].name, "b");
  EXPECT_NO_THROW(validate(r));
  EXPECT_TRUE(check_equivalent(g, r, {.seed = 3}).ok);
  EXPECT_NE(cands[0].where.find("matmul"), std::string::npos);
}

TEST(OptMatch, ParameterConstraintsAndLiteralsRestrictMatches) {
  GraphBuilder b;
  auto x = b.input("x", {2, 4});
  auto w = b.weight("w", {4, 4});
  b.output("a", b.relu(b.matmul(x, w)));          // act none
  b.output("b", b.relu(b.matmul(x, w, "relu")));  // act relu
  Graph g = b.finish();
  auto literal = rule(R"((rule fuse (tensors ?x ?y)
      (source (relu (matmul none ?x ?y))) (target (matmul relu ?x ?y))))");
  auto cands = apply(literal, g);
  ASSERT_EQ(cands.size(), 1u);
  EXPECT_TRUE(check_equivalent(g, cands[0].graph, {.seed = 1}).ok);
  auto constrained = rule(R"((rule idem (tensors ?x ?y) (params (?c act))
      (source (relu (matmul ?c ?x ?y))) (target (matmul ?c ?x ?y))
      (where (= ?c relu))))");
  auto c2 = apply(constrained, g);
  ASSERT_EQ(c2.size(), 1u);
  EXPECT_TRUE(check_equivalent(g, c2[0].graph, {.seed = 1}).ok);
  auto never = rule(R"((rule never (tensors ?x ?y) (params (?c act))
      (source (relu (matmul ?c ?x ?y))) (target (matmul ?c ?x ?y))
      (where (= ?c sigmoid))))");
  EXPECT_TRUE(apply(never, g).empty());
}

TEST(OptMatch, ShapeConditionsUseTheBoundTensors) {
  GraphBuilder b;
  auto x = b.input("x", {2, 4});
  b.output("a", b.relu(b.matmul(x, b.weight("w", {4, 4}))));
  b.output("b", b.relu(b.matmul(x, b.weight("v", {4, 6}))));
  Graph g = b.finish();
  auto wide = rule(R"((rule wide (tensors ?x ?y)
      (source (relu (matmul none ?x ?y))) (target (matmul relu ?x ?y))
      (where (> (dim ?y 1) 4))))");
  auto cands = apply(wide, g);
  ASSERT_EQ(cands.size(), 1u);
  EXPECT_EQ(count_op(cands[0].graph, "relu"), 1u);
}

TEST(OptMatch, InternalTensorUsedOutsideBlocksTheMatch) {
  GraphBuilder b;
  auto x = b.input("x", {2, 4});
  auto m = b.matmul(x, b.weight("w", {4, 4}));
  b.output("a", b.relu(m));
  b.output("b", b.tanh(m));  // the matmul's output escapes the pattern relu(matmul)
  Graph g = b.finish();
  auto fuse = rule(R"((rule fuse (tensors ?x ?y)
      (source (relu (matmul none ?x ?y))) (target (matmul relu ?x ?y))))");
  EXPECT_TRUE(apply(fuse, g).empty());

  GraphBuilder b2;  // the internal tensor as a graph output blocks it too
  auto x2 = b2.input("x", {2, 4});
  auto m2 = b2.matmul(x2, b2.weight("w", {4, 4}));
  b2.output("a", b2.relu(m2));
  b2.output("m", m2);
  EXPECT_TRUE(apply(fuse, b2.finish()).empty());
}

TEST(OptMatch, SharedSubtermsMustMatchOneTensor) {
  auto square = rule(R"((rule sq (tensors ?x)
      (source (ewmul (relu ?x) (relu ?x))) (target (ewmul (relu ?x) (relu ?x)))))");
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto r1 = b.relu(x), r2 = b.relu(x);
  b.output("same", b.ewmul(r1, r1));
  b.output("distinct", b.ewmul(r1, r2));  // two relu nodes: not the one subterm
  Graph g = b.finish();
  auto cands = apply(square, g);
  // Only ewmul(r1, r1) matches; r1 is also read by the other ewmul, which blocks it... unless
  // that reader is inside the match. Here it is outside, so nothing matches at all.
  EXPECT_TRUE(cands.empty());
  GraphBuilder b2;
  auto y = b2.input("x", {2, 3});
  auto s = b2.relu(y);
  b2.output("same", b2.ewmul(s, s));
  EXPECT_EQ(apply(square, b2.finish()).size(), 1u);
}

TEST(OptMatch, SplitPatternsNeedTheRecordedCut) {
  // Both halves are outputs: with only split0 in the source, split's other output would
  // escape the match.
  auto split_concat = rule(R"((rule sc (tensors ?x ?y)
      (source (split0 1 (concat 1 ?x ?y)) (split1 1 (concat 1 ?x ?y))) (target ?x ?y)))");
  GraphBuilder b;
  auto x = b.input("x", {2, 3});
  auto y = b.input("y", {2, 5});
  auto parts = b.op_multi("split", {b.concat(1, {x, y})}, {{"axis", int64_t{1}}});
  b.output("p0", b.relu(parts[0]));
  b.output("p1", parts[1]);
  Graph g = b.finish();
  auto cands = apply(split_concat, g);
  ASSERT_EQ(cands.size(), 1u);
  EXPECT_TRUE(check_equivalent(g, cands[0].graph, {.seed = 2}).ok);
  EXPECT_EQ(count_op(cands[0].graph, "split"), 0u);
  EXPECT_EQ(count_op(cands[0].graph, "concat"), 0u);
  auto half = rule(R"((rule half (tensors ?x ?y)
      (source (split0 1 (concat 1 ?x ?y))) (target ?x)))");
  EXPECT_TRUE(apply(half, g).empty());

  // Explicit sizes that disagree with any recorded cut are outside the language.
  GraphBuilder b2;
  auto z = b2.input("z", {2, 8});
  auto q = b2.op_multi("split", {b2.concat(1, {b2.relu(z), b2.tanh(z)})},
                       {{"axis", int64_t{1}}, {"sizes", std::vector<int64_t>{4, 12}}});
  b2.output("q0", q[0]);
  b2.output("q1", q[1]);
  EXPECT_TRUE(apply(split_concat, b2.finish()).empty());
}

TEST(OptMatch, TargetsThatDoNotTypeCheckAreNotEmitted) {
  // A (false) rule used only for typing: swapping matmul operands types only for squares.
  auto swap = rule(R"((rule swap (tensors ?x ?y)
      (source (matmul none ?x ?y)) (target (matmul none ?y ?x))))");
  GraphBuilder b;
  b.output("a", b.matmul(b.input("x", {2, 3}), b.weight("w", {3, 4})));
  b.output("b", b.matmul(b.input("s", {3, 3}), b.weight("v", {3, 3})));
  auto cands = apply(swap, b.finish());
  EXPECT_EQ(cands.size(), 1u);  // only the square one
}

TEST(OptMatch, NodesOutsideTheLanguageDoNotMatchAParameterlessTerm) {
  // (transpose ?x) is the 2-d transpose and (softmax ?x) the softmax over the last axis: a
  // 4-d transpose or a softmax over axis 1 is another function, so a rule over the language's
  // terms must not rewrite it. Two 4-d transposes, 1023 then 0132, keep the shape of a
  // [2,2,2,2] input and are not the identity.
  auto cancel =
      rule(R"((rule cancel (tensors ?x) (source (transpose (transpose ?x))) (target ?x)))");
  auto twice =
      rule(R"((rule twice (tensors ?x) (source (softmax (softmax ?x))) (target (softmax ?x))))");
  GraphBuilder b;
  auto x = b.input("x", {2, 2, 2, 2});
  b.output("t", b.transpose(b.transpose(x, {1, 0, 2, 3}), {0, 1, 3, 2}));
  b.output("s", b.softmax(b.softmax(x, 1), 1));
  Graph g = b.finish();
  EXPECT_TRUE(apply(cancel, g).empty());
  EXPECT_TRUE(apply(twice, g).empty());
  // The language's forms still match.
  GraphBuilder m;
  auto y = m.input("y", {2, 3});
  m.output("t", m.relu(m.transpose(m.transpose(y, {1, 0}), {1, 0})));
  EXPECT_EQ(apply(cancel, m.finish()).size(), 1u);
}

TEST(OptMatch, PermuteMatchesTransposesOfMoreAxesByTheirPermutation) {
  // (permute p x) is a transpose of three or more axes, p its permutation: BERT's key
  // transpose 0231 followed by a swap of the last two axes is one swap of the middle axes.
  auto compose = rule(R"((rule compose (tensors ?x)
      (source (permute 0_1_3_2 (permute 0_2_3_1 ?x))) (target (permute 0_2_1_3 ?x))))");
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 2, 4});
  b.output("k", b.relu(b.transpose(b.transpose(x, {0, 2, 3, 1}), {0, 1, 3, 2})));
  b.output("other", b.relu(b.transpose(b.transpose(x, {0, 2, 1, 3}), {0, 1, 3, 2})));
  Graph g = b.finish();
  auto cands = apply(compose, g);
  ASSERT_EQ(cands.size(), 1u);  // the second pair starts with another permutation
  // The new swap of the middle axes is the other pair's first transpose: one node.
  EXPECT_EQ(count_op(cands[0].graph, "transpose"), 2u) << to_text(cands[0].graph);
  EXPECT_TRUE(check_equivalent(g, cands[0].graph, {.seed = 5}).ok);
  // A parameter variable binds the permutation; the 2-d transpose is not a permute.
  auto any = rule(R"((rule any (tensors ?x) (params (?p perm))
      (source (relu (permute ?p ?x))) (target (permute ?p (relu ?x)))))");
  EXPECT_EQ(apply(any, g).size(), 2u);
  GraphBuilder m;
  m.output("t", m.relu(m.transpose(m.input("y", {2, 3}), {1, 0})));
  EXPECT_TRUE(apply(any, m.finish()).empty());
}

TEST(OptMatch, RewritesThatCloseACycleAreDetected) {
  // m2's weight depends on m1: merging m1 and m2 would feed the merged matmul its own output.
  GraphBuilder b;
  auto x = b.input("x", {4, 4});
  auto m1 = b.matmul(x, b.weight("w1", {4, 4}));
  auto m2 = b.matmul(x, b.relu(m1));
  b.output("y", m2);
  Graph g = b.finish();
  auto cands = apply(rule(kMergeMatmuls), g);
  ASSERT_FALSE(cands.empty());
  for (auto& c : cands) EXPECT_FALSE(acyclic(c.graph));
}

TEST(OptMatch, RuleWithUnboundTargetParameterIsRefused) {
  // The parser refuses such rules; a Rule built in code must be refused here too.
  using rules::Term;
  rules::Rule r;
  r.name = "enl";
  r.tensor_vars = {"x", "w"};
  r.param_vars = {{"k", "kernel"}};
  auto conv = [](rules::TermPtr w) {
    return Term::app("conv", {Term::integer(1), Term::symbol("same"), Term::symbol("none"),
                              Term::var("x"), std::move(w)});
  };
  r.source = {conv(Term::var("w"))};
  r.target = {conv(Term::app("enlarge", {Term::var("k"), Term::var("w")}))};
  EXPECT_THROW(RuleTransform{r}, Error);
}

}  // namespace
}  // namespace graphsub::opt
