// Candidate rules as equalities: canonical forms (renaming, orientation, output order), the
// instance relation, the two common-subgraph generalizations, directions of emitted rules.
#include <gtest/gtest.h>

#include "gen/common_subgraph.h"
#include "gen/equality.h"
#include "gen/library_file.h"
#include "rules/rule_parser.h"

namespace graphsub::gen {
namespace {

Equality eq(std::vector<std::string> lhs, std::vector<std::string> rhs) {
  Equality e;
  for (auto& t : lhs) e.lhs.push_back(rules::parse_term(t));
  for (auto& t : rhs) e.rhs.push_back(rules::parse_term(t));
  e.lhs_ops = count_ops(e.lhs);
  e.rhs_ops = count_ops(e.rhs);
  return e;
}

Equality canon(Equality e) {
  canonicalize(e);
  return e;
}

TEST(GenEquality, CanonicalFormIgnoresNamesOrientationAndOutputOrder) {
  Equality a = canon(eq({"(matmul none ?x (concat 1 ?y ?z))"},
                        {"(concat 1 (matmul none ?x ?y) (matmul none ?x ?z))"}));
  Equality b = canon(eq({"(concat 1 (matmul none ?p ?q) (matmul none ?p ?r))"},
                        {"(matmul none ?p (concat 1 ?q ?r))"}));
  EXPECT_EQ(a.key, b.key);
  Equality c = canon(eq({"(relu ?x)", "(relu ?y)"}, {"(split0 0 (relu (concat 0 ?x ?y)))",
                                                     "(split1 0 (relu (concat 0 ?x ?y)))"}));
  Equality d =
      canon(eq({"(split1 0 (relu (concat 0 ?b ?a)))", "(split0 0 (relu (concat 0 ?b ?a)))"},
               {"(relu ?a)", "(relu ?b)"}));
  EXPECT_EQ(c.key, d.key);
  // Variables become a, b, c in order of first occurrence.
  EXPECT_NE(a.key.find("?a"), std::string::npos);
  EXPECT_EQ(a.key.find("?x"), std::string::npos);
}

TEST(GenEquality, DifferentRulesKeepDifferentKeys) {
  Equality a = canon(eq({"(ewadd ?x ?y)"}, {"(ewadd ?y ?x)"}));
  Equality b = canon(eq({"(ewmul ?x ?y)"}, {"(ewmul ?y ?x)"}));
  Equality c = canon(eq({"(ewadd ?x ?x)"}, {"(smul ?x ?y)"}));
  EXPECT_NE(a.key, b.key);
  EXPECT_NE(a.key, c.key);
  EXPECT_EQ(a.skeleton.find("?a"), std::string::npos);  // variables erased
}

TEST(GenEquality, InstancesAreRecognised) {
  Equality general = canon(eq({"(ewadd (ewadd ?x ?y) ?z)"}, {"(ewadd ?x (ewadd ?y ?z))"}));
  Equality same_vars = canon(eq({"(ewadd (ewadd ?x ?x) ?z)"}, {"(ewadd ?x (ewadd ?x ?z))"}));
  Equality other = canon(eq({"(ewmul (ewmul ?x ?y) ?z)"}, {"(ewmul ?x (ewmul ?y ?z))"}));
  EXPECT_TRUE(is_instance(same_vars, general));
  EXPECT_FALSE(is_instance(general, same_vars));
  EXPECT_FALSE(is_instance(other, general));
  EXPECT_EQ(same_vars.skeleton, general.skeleton);
}

TEST(GenEquality, InputSideCommonSubgraphIsReplacedByAVariable) {
  // relu(x) feeds both sides: the rule without it is more general.
  Equality e = eq({"(transpose (matmul none (relu ?x) ?w))"},
                  {"(matmul none (transpose ?w) (transpose (relu ?x)))"});
  std::vector<Equality> gs = input_generalizations(e);
  ASSERT_EQ(gs.size(), 1u);
  Equality g = canon(gs[0]);
  Equality expected = canon(
      eq({"(transpose (matmul none ?v ?w))"}, {"(matmul none (transpose ?w) (transpose ?v))"}));
  EXPECT_EQ(g.key, expected.key);
  // Nothing shared: no generalization.
  EXPECT_TRUE(input_generalizations(eq({"(transpose (transpose ?x))"}, {"?x"})).empty());
}

TEST(GenEquality, OutputSideCommonSubgraphLeavesTheDifferingArguments) {
  Equality e = eq({"(relu (matmul none ?x (imatmul)))"}, {"(relu ?x)"});
  std::optional<Equality> g = output_generalization(e);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(canon(*g).key, canon(eq({"(matmul none ?x (imatmul))"}, {"?x"})).key);
  // Different operators on top, or different parameters: not of that form.
  EXPECT_FALSE(output_generalization(eq({"(relu ?x)"}, {"(sigmoid ?x)"})).has_value());
  EXPECT_FALSE(output_generalization(eq({"(conv 1 same none ?x ?w)"}, {"(conv 2 same none ?x ?w)"}))
                   .has_value());
  // Every output needs a common top operator.
  EXPECT_FALSE(output_generalization(
                   eq({"(relu ?x)", "(relu ?y)"}, {"(relu ?x)", "(split0 0 (concat 0 ?y ?x))"}))
                   .has_value());
}

TEST(GenEquality, RulesComeInEveryDirectionThatCanRewrite) {
  Equality both = canon(eq({"(matmul none ?x (concat 1 ?y ?z))"},
                           {"(concat 1 (matmul none ?x ?y) (matmul none ?x ?z))"}));
  std::vector<rules::Rule> r = rules_of(both, "gen-0001");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].name, "gen-0001");
  EXPECT_EQ(r[1].name, "gen-0001-rev");
  // A bare variable is never a source; a target may not use unbound variables.
  std::vector<rules::Rule> one = rules_of(canon(eq({"(transpose (transpose ?x))"}, {"?x"})), "g");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(rules::term_str(one[0].source[0]), "(transpose (transpose ?a))");
  std::vector<rules::Rule> drop = rules_of(canon(eq({"(split0 0 (concat 0 ?x ?y))"}, {"?x"})), "g");
  ASSERT_EQ(drop.size(), 1u);
  EXPECT_EQ(drop[0].tensor_vars.size(), 2u);
}

}  // namespace
}  // namespace graphsub::gen
