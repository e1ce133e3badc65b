// The reduction of large candidates before classification (reduce_common_subgraphs): common
// input subgraphs become variables, all at once; common output operators are peeled off;
// repeated to a fixpoint; conditions follow the variables that survive; a reduced candidate
// lands in the class its smaller form already has.
#include <gtest/gtest.h>

#include "gen/classify/classify.h"
#include "gen/classify/common_subgraph.h"
#include "gen/enumerate/enumerate.h"
#include "rules/rule_parser.h"
#include "test_gen_util.h"

namespace graphsub::gen {
namespace {

using testing::eq;

std::string key_of(Equality e) {
  canonicalize(e);
  return e.key;
}

std::string reduced_key(const Equality& e) {
  std::optional<Equality> r = reduce_common_subgraphs(e);
  EXPECT_TRUE(r.has_value());
  return r ? key_of(*r) : std::string();
}

rules::TermPtr dense(const std::string& w, const std::string& x) {
  auto dim1 = [](const std::string& v) {
    return rules::Term::app("dim", {rules::Term::var(v), rules::Term::integer(1)});
  };
  return rules::Term::app("=", {dim1(w), dim1(x)});
}

TEST(GenReduce, InputFormReplacesEveryMaximalCommonSubtermAtOnce) {
  Equality e = eq({"(transpose (matmul none (relu ?x) (sigmoid (relu ?w))))"},
                  {"(matmul none (transpose (sigmoid (relu ?w))) (transpose (relu ?x)))"});
  // (relu ?w) is common too, but inside the larger common (sigmoid (relu ?w)).
  std::vector<rules::TermPtr> common = maximal_common_subterms(e);
  ASSERT_EQ(common.size(), 2u);
  EXPECT_EQ(rules::term_str(common[0]), "(relu ?x)");  // sorted by text
  EXPECT_EQ(rules::term_str(common[1]), "(sigmoid (relu ?w))");
  // The proving stage's use: one generalization per subterm.
  EXPECT_EQ(input_generalizations(e).size(), 2u);
  // The reduction: both at once, two distinct fresh variables.
  EXPECT_EQ(reduced_key(e), key_of(eq({"(transpose (matmul none ?a ?b))"},
                                      {"(matmul none (transpose ?b) (transpose ?a))"})));
  std::optional<Equality> r = reduce_common_subgraphs(e);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->lhs_ops, 2);
  EXPECT_EQ(r->rhs_ops, 3);
}

TEST(GenReduce, OutputFormPeelsCommonTopOperators) {
  Equality e = eq({"(relu (transpose (transpose ?x)))"}, {"(relu ?x)"});
  EXPECT_EQ(reduced_key(e), key_of(eq({"(transpose (transpose ?x))"}, {"?x"})));
  // Different parameters on top: not peeled.
  Equality p = eq({"(concat 0 (transpose (transpose ?x)) ?y)"}, {"(concat 1 ?x ?y)"});
  std::optional<Equality> r = reduce_common_subgraphs(p);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(key_of(*r), key_of(p));
  // Two arguments differ: equal only jointly (the scalar moves), so not peeled.
  Equality joint = eq({"(matmul none (ewmul ?a (smul ?b ?c)) ?d)"},
                      {"(matmul none (ewmul ?a ?b) (smul ?d ?c))"});
  r = reduce_common_subgraphs(joint);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(key_of(*r), key_of(joint));
  // output_generalization (the proving stage's) still peels it, for the prover to decide.
  EXPECT_TRUE(output_generalization(joint).has_value());
}

TEST(GenReduce, BothFormsRepeatToAFixpoint) {
  // Peel relu, abstract (sigmoid ?y), peel ewadd, leaving the double transpose.
  Equality e = eq({"(relu (ewadd (sigmoid ?y) (transpose (transpose ?x))))"},
                  {"(relu (ewadd (sigmoid ?y) ?x))"});
  EXPECT_EQ(reduced_key(e), key_of(eq({"(transpose (transpose ?x))"}, {"?x"})));
  // A reduced form reduces no further.
  std::optional<Equality> r = reduce_common_subgraphs(e);
  ASSERT_TRUE(r.has_value());
  std::optional<Equality> again = reduce_common_subgraphs(*r);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(key_of(*again), key_of(*r));
}

TEST(GenReduce, AWholeOutputIsNotAbstracted) {
  // (relu (transpose ?x)) is the whole right side: the reduction abstracts the largest common
  // subterm inside it instead, (transpose ?x).
  Equality e = eq({"(sigmoid (relu (transpose ?x)))"}, {"(relu (transpose ?x))"});
  std::vector<rules::TermPtr> inner = maximal_common_subterms(e, true);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(rules::term_str(inner[0]), "(transpose ?x)");
  EXPECT_EQ(reduced_key(e), key_of(eq({"(sigmoid (relu ?g))"}, {"(relu ?g)"})));
  // The proving stage's generalizations take the maximal one.
  std::vector<Equality> gs = input_generalizations(e);
  ASSERT_EQ(gs.size(), 1u);
  EXPECT_EQ(key_of(gs[0]), key_of(eq({"(sigmoid ?g)"}, {"?g"})));
}

TEST(GenReduce, StopsBeforeAPairOfUnrelatedVariables) {
  // Peeling ewadd would give ?x = ?y, ?y = ?x: never true, so commutativity stays.
  Equality e = eq({"(relu (ewadd ?x ?y))"}, {"(relu (ewadd ?y ?x))"});
  EXPECT_EQ(reduced_key(e), key_of(eq({"(ewadd ?x ?y)"}, {"(ewadd ?y ?x)"})));
}

TEST(GenReduce, UnchangedAndVanishingEqualities) {
  Equality e = eq({"(transpose (transpose ?x))"}, {"?x"});
  std::optional<Equality> r = reduce_common_subgraphs(e);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->lhs, e.lhs);  // the same terms: nothing to reduce
  EXPECT_EQ(r->rhs, e.rhs);
  // Identical sides reduce to nothing.
  EXPECT_FALSE(reduce_common_subgraphs(eq({"(relu (sigmoid ?x))"}, {"(relu (sigmoid ?x))"})));
  // Repeated output pairs are kept once.
  Equality two = eq({"(relu (transpose (transpose ?x)))", "(sigmoid (transpose (transpose ?x)))"},
                    {"(relu ?x)", "(sigmoid ?x)"});
  std::optional<Equality> one = reduce_common_subgraphs(two);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->lhs.size(), 1u);
}

TEST(GenReduce, ConditionsFollowTheSurvivingVariables) {
  // Merging two convs through concatenated kernels, under a common relu: conditions on both
  // kernels stay.
  Equality merge = eq({"(relu (concat 1 (conv 1 same none ?i ?k) (conv 1 same none ?i ?e)))"},
                      {"(relu (conv 1 same none ?i (concat 0 ?k ?e)))"});
  std::optional<Equality> r = reduce_common_subgraphs(merge);
  ASSERT_TRUE(r.has_value());
  std::vector<rules::TermPtr> conds = {dense("e", "i"), dense("k", "i")};
  EXPECT_EQ(conditions_within(*r, conds).size(), 2u);
  // A conv abstracted into a variable takes its condition with it.
  Equality swap = eq({"(ewadd (conv 1 same none ?i ?k) (relu ?j))"},
                     {"(ewadd (relu ?j) (conv 1 same none ?i ?k))"});
  r = reduce_common_subgraphs(swap);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(key_of(*r), key_of(eq({"(ewadd ?a ?b)"}, {"(ewadd ?b ?a)"})));
  EXPECT_TRUE(conditions_within(*r, {dense("k", "i")}).empty());
}

// Classifies a small space with reduction from `reduce_from` operators.
Classified classify(int reduce_from) {
  Space s =
      testing::make_test_space({"ewadd", "relu", "transpose", "matmul"}, testing::matrix_pool(), 3);
  EnumerationResult en = enumerate_graphs(s, 1, null_reporter());
  ClassifyOptions o;
  o.threads = 1;
  o.reduce_from_ops = reduce_from;
  return classify_candidates(s, en, o, null_reporter());
}

TEST(GenReduce, LargeCandidatesLandInTheClassesOfSmallerOnes) {
  Classified plain = classify(99), reduced = classify(3);
  EXPECT_EQ(plain.reduced, 0u);
  EXPECT_GT(reduced.reduced, 0u);
  EXPECT_EQ(plain.pairs, reduced.pairs);
  EXPECT_EQ(plain.passed, reduced.passed);
  EXPECT_LT(reduced.classes.size(), plain.classes.size());
  // Every pair that passed is in a class or reduced to nothing. A class of the plain run keeps
  // its own pairs and gains the reduced ones; some reduced pairs land in such a class.
  uint64_t in_classes = 0, landed = 0;
  for (auto& [k, acc] : reduced.classes) {
    in_classes += acc.pairs;
    auto it = plain.classes.find(k);
    if (it == plain.classes.end()) {
      EXPECT_EQ(acc.pairs, acc.reduced) << k;  // a new, reduced form
      continue;
    }
    EXPECT_EQ(acc.pairs - acc.reduced, it->second.pairs) << k;
    if (acc.reduced > 0 && it->second.pairs > 0) ++landed;
  }
  EXPECT_EQ(in_classes + reduced.vanished, reduced.passed);
  EXPECT_GT(landed, 0u);
}

}  // namespace
}  // namespace graphsub::gen
