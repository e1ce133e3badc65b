// Candidate rules as equalities: canonical forms (renaming, orientation, output order), the
// instance relation, the two common-subgraph generalizations, directions of emitted rules.
#include <gtest/gtest.h>

#include "core/error.h"
#include "gen/classify/common_subgraph.h"
#include "gen/classify/equality.h"
#include "gen/library_file.h"
#include "gen/prove/rule_owner.h"
#include "rules/orientations.h"
#include "rules/rule_parser.h"
#include "rules/rule_printer.h"
#include "test_gen_util.h"

namespace graphsub::gen {
namespace {

using testing::eq;

// (= (dim ?w 1) (dim ?x 1)): the kernel w of a conv over x is dense.
rules::TermPtr dense_condition(const std::string& w, const std::string& x) {
  auto dim1 = [](const std::string& v) {
    return rules::Term::app("dim", {rules::Term::var(v), rules::Term::integer(1)});
  };
  return rules::Term::app("=", {dim1(w), dim1(x)});
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

TEST(GenEquality, KeysGiveBackTheirEqualities) {
  // Parameter variables, several outputs, a bare variable as an output, splits.
  std::vector<Equality> all = {
      canon(eq({"(conv ?p_stride same relu ?x ?w)"}, {"(relu (conv ?p_stride same none ?x ?w))"})),
      canon(eq({"(relu ?x)", "(relu ?y)"},
               {"(split0 0 (relu (concat 0 ?x ?y)))", "(split1 0 (relu (concat 0 ?x ?y)))"})),
      canon(eq({"(transpose (transpose ?x))"}, {"?x"})),
      canon(eq({"(matmul sigmoid (smul ?a ?s) ?b)"}, {"(smul (matmul sigmoid ?a ?b) ?s)"}))};
  for (const Equality& e : all) {
    Equality back = equality_from_key(e.key);
    EXPECT_EQ(back.key, e.key);
    EXPECT_EQ(back.skeleton, e.skeleton);
    ASSERT_EQ(back.lhs.size(), e.lhs.size());
    for (size_t i = 0; i < e.lhs.size(); ++i) {
      EXPECT_TRUE(rules::term_equal(back.lhs[i], e.lhs[i])) << e.key;
      EXPECT_TRUE(rules::term_equal(back.rhs[i], e.rhs[i])) << e.key;
    }
  }
  EXPECT_THROW(equality_from_key("(relu ?a)"), Error);
  // A key is read only as the canonical text it is: variables not named in order are refused.
  EXPECT_THROW(equality_from_key("(sigmoid ?b) = (relu ?b)"), Error);
}

// A class retried under shape conditions goes to another rank's lanes by its key, conditions
// and all.
TEST(GenEquality, AKeyWithConditionsIsReadBackWhole) {
  Equality e = eq({"(conv 1 same none ?x (concat 0 ?w ?v))"},
                  {"(concat 1 (conv 1 same none ?x ?w) (conv 1 same none ?x ?v))"});
  e.conditions = {dense_condition("w", "x"), dense_condition("v", "x")};
  canonicalize(e);
  ASSERT_NE(e.key.find(" where "), std::string::npos);
  Equality back = equality_from_key(e.key);
  EXPECT_EQ(back.key, e.key);
  ASSERT_EQ(back.conditions.size(), 2u);
  EXPECT_EQ(rules::term_str(back.conditions[0]), rules::term_str(e.conditions[0]));
  EXPECT_EQ(rules::term_str(back.conditions[1]), rules::term_str(e.conditions[1]));
}

// The rank that decides a class is the same for every class the proving passes compare it
// with: its other renaming forms (one skeleton) and the other members of a lifted rule (other
// parameter values, possibly another canonical orientation).
TEST(GenEquality, ClassesComparedWhileProvingHaveOneOwner) {
  auto key = [](std::vector<std::string> l, std::vector<std::string> r) {
    return canon(eq(std::move(l), std::move(r))).key;
  };
  std::string relu = key({"(conv 1 same relu ?x ?w)"}, {"(relu (conv 1 same none ?x ?w))"});
  std::string sigm = key({"(conv 1 same sigmoid ?x ?w)"}, {"(sigmoid (conv 1 same none ?x ?w))"});
  std::string stride = key({"(conv 2 same relu ?x ?w)"}, {"(relu (conv 2 same none ?x ?w))"});
  std::string both = key({"(ewadd ?x ?y)"}, {"(ewadd ?y ?x)"});
  std::string same = key({"(ewadd ?x ?x)"}, {"(ewadd ?x ?x)"});
  std::string flipped = key({"(sigmoid ?x)"}, {"(relu ?x)"});
  std::string other = key({"(relu ?x)"}, {"(sigmoid ?x)"});
  EXPECT_EQ(owner_form(relu), owner_form(stride));
  EXPECT_NE(owner_form(relu), owner_form(sigm)) << "another operator structure";
  EXPECT_EQ(owner_form(both), owner_form(same));
  EXPECT_EQ(owner_form(flipped), owner_form(other));
  EXPECT_EQ(owner_form(both), "(ewadd _ _)|(ewadd _ _)");
  EXPECT_EQ(owner_form(relu + " where (= (dim ?a 1) (dim ?b 1))"), owner_form(relu));
  EXPECT_EQ(rule_owner(relu, 1), 0);
  for (int ranks : {2, 3, 8}) {
    EXPECT_EQ(rule_owner(relu, ranks), rule_owner(stride, ranks));
    EXPECT_LT(rule_owner(sigm, ranks), ranks);
  }
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

TEST(GenEquality, LibraryRulesAreEqualitiesUsedInEveryDirectionThatCanRewrite) {
  Equality both = canon(eq({"(matmul none ?x (concat 1 ?y ?z))"},
                           {"(concat 1 (matmul none ?x ?y) (matmul none ?x ?z))"}));
  rules::Rule lib = library_rule(both);
  EXPECT_TRUE(lib.both_ways);
  EXPECT_TRUE(rules::is_content_name(lib.name)) << lib.name;
  std::vector<rules::Rule> r = rules::orientations(lib);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].name, lib.name);
  EXPECT_EQ(r[1].name, lib.name + "~rev");
  // The directions are the generator's own rules of each direction.
  EXPECT_EQ(rules::rule_str(r[0]), rules::rule_str(to_rule(both, lib.name, false)));
  EXPECT_EQ(rules::rule_str(r[1]), rules::rule_str(to_rule(both, lib.name + "~rev", true)));
  // A bare variable is never a source; a target may not use unbound variables.
  std::vector<rules::Rule> one =
      rules::orientations(library_rule(canon(eq({"(transpose (transpose ?x))"}, {"?x"}))));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(rules::term_str(one[0].source[0]), "(transpose (transpose ?a))");
  std::vector<rules::Rule> drop =
      rules::orientations(library_rule(canon(eq({"(split0 0 (concat 0 ?x ?y))"}, {"?x"}))));
  ASSERT_EQ(drop.size(), 1u);
  EXPECT_EQ(drop[0].tensor_vars.size(), 2u);
}

// A library names each equality by its content: the same name wherever it lands in the file
// and however its variables were called; another equality, another name.
TEST(GenEquality, LibraryNamesDependOnTheEqualityNotItsPosition) {
  Equality a = canon(eq({"(matmul none ?x (concat 1 ?y ?z))"},
                        {"(concat 1 (matmul none ?x ?y) (matmul none ?x ?z))"}));
  Equality b = canon(eq({"(transpose (transpose ?x))"}, {"?x"}));
  std::string name_a = library_rule(a).name, name_b = library_rule(b).name;
  EXPECT_NE(name_a, name_b);
  EXPECT_EQ(library_rule(canon(eq({"(concat 1 (matmul none ?p ?q) (matmul none ?p ?r))"},
                                  {"(matmul none ?p (concat 1 ?q ?r))"})))
                .name,
            name_a);
  GeneratorResult first, second;
  first.rules = {a, b};
  second.rules = {b, a};
  std::string one = library_text(first, {}), other = library_text(second, {});
  for (const std::string& text : {one, other}) {
    EXPECT_NE(text.find("(equality " + name_a + "\n"), std::string::npos) << text;
    EXPECT_NE(text.find("(equality " + name_b + "\n"), std::string::npos) << text;
  }
  EXPECT_LT(one.find(name_a), one.find(name_b));
  EXPECT_GT(other.find(name_a), other.find(name_b));
}

TEST(GenEquality, ConditionsAreRenamedWithTheTermsAndPartOfTheKey) {
  auto dense = [](const char* w, const char* x) { return dense_condition(w, x); };
  Equality plain = canon(eq({"(conv 1 same none ?i (concat 0 ?k ?l))"},
                            {"(concat 1 (conv 1 same none ?i ?k) (conv 1 same none ?i ?l))"}));
  Equality e = eq({"(conv 1 same none ?i (concat 0 ?k ?l))"},
                  {"(concat 1 (conv 1 same none ?i ?k) (conv 1 same none ?i ?l))"});
  e.conditions = {dense("l", "i"), dense("k", "i"), dense("k", "i")};
  Equality c = canon(e);
  // The same terms as without conditions, the conditions renamed alike, sorted, deduplicated.
  ASSERT_EQ(c.lhs.size(), plain.lhs.size());
  EXPECT_EQ(rules::term_str(c.lhs[0]), rules::term_str(plain.lhs[0]));
  ASSERT_EQ(c.conditions.size(), 2u);
  EXPECT_EQ(rules::term_str(c.conditions[0]), "(= (dim ?b 1) (dim ?a 1))");
  EXPECT_EQ(rules::term_str(c.conditions[1]), "(= (dim ?c 1) (dim ?a 1))");
  EXPECT_NE(c.key, plain.key);
  EXPECT_EQ(c.key.rfind(plain.key, 0), 0u);  // the plain key, then the conditions
  // Renamed alike from any other names.
  Equality other = eq({"(concat 1 (conv 1 same none ?x ?v) (conv 1 same none ?x ?w))"},
                      {"(conv 1 same none ?x (concat 0 ?v ?w))"});
  other.conditions = {dense("w", "x"), dense("v", "x")};
  EXPECT_EQ(canon(other).key, c.key);
  // Extra terms passed along are renamed the same way, outside the key.
  Equality f = eq({"(conv 1 same none ?i (concat 0 ?k ?l))"},
                  {"(concat 1 (conv 1 same none ?i ?k) (conv 1 same none ?i ?l))"});
  std::vector<rules::TermPtr> also{dense("l", "i")};
  canonicalize(f, &also);
  EXPECT_EQ(f.key, plain.key);
  EXPECT_EQ(rules::term_str(also[0]), "(= (dim ?c 1) (dim ?a 1))");
}

TEST(GenEquality, EmittedRulesCarryTheirConditions) {
  Equality e = eq({"(conv 1 same none ?x ?v)", "(conv 1 same none ?x ?w)"},
                  {"(split0 1 (conv 1 same none ?x (concat 0 ?v ?w)))",
                   "(split1 1 (conv 1 same none ?x (concat 0 ?v ?w)))"});
  e.conditions = {dense_condition("v", "x"), dense_condition("w", "x")};
  rules::Rule lib = library_rule(canon(e));
  std::vector<rules::Rule> r = rules::orientations(lib);
  ASSERT_EQ(r.size(), 2u);
  for (auto& rule : r) ASSERT_EQ(rule.constraints.size(), 2u);
  // The printed equality parses back with its (where ...) clause.
  rules::RuleSet ax =
      rules::load_rules(std::string(GRAPHSUB_SOURCE_DIR) + "/specs/operators.axioms");
  rules::RuleSet back = rules::parse_rules(rules::rule_str(lib), "t.rules", &ax);
  ASSERT_EQ(back.rules.size(), 1u);
  EXPECT_EQ(back.rules[0].constraints.size(), 2u);
}

TEST(GenEquality, CommonConditionsIntersectByText) {
  std::vector<rules::TermPtr> a{dense_condition("c", "a"), dense_condition("b", "a")};
  std::vector<rules::TermPtr> b{dense_condition("b", "a")};
  std::vector<rules::TermPtr> both = common_conditions(a, b);
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(rules::term_str(both[0]), "(= (dim ?b 1) (dim ?a 1))");
  EXPECT_TRUE(common_conditions(a, {}).empty());
  std::vector<rules::TermPtr> self = common_conditions(a, a);
  ASSERT_EQ(self.size(), 2u);  // sorted
  EXPECT_EQ(rules::term_str(self[0]), "(= (dim ?b 1) (dim ?a 1))");
}

}  // namespace
}  // namespace graphsub::gen
