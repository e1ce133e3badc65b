// Rules unfolded from a fused operator's definition (gen/unfold): term rewriting by axioms in
// one direction, the unfolded forms and their variants, and the refusals that keep a library
// of such rules made of proven equalities only.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "gen/library_file.h"
#include "gen/unfold/term_rewrite.h"
#include "gen/unfold/unfold.h"
#include "rules/rule_parser.h"
#include "test_gen_util.h"
#include "verify/verifier.h"

namespace graphsub::gen {
namespace {

const rules::RuleSet& axioms() {
  return testing::shipped_axioms();
}

// Runs `f`, which must throw an Error whose message holds `why`.
template <class F>
void expect_error(F&& f, const std::string& why) {
  try {
    f();
    ADD_FAILURE() << "no error (expected one saying: " << why << ")";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

std::vector<std::string> texts(const std::vector<rules::TermPtr>& ts) {
  std::vector<std::string> out;
  for (auto& t : ts) out.push_back(rules::term_str(t));
  return out;
}

TEST(GenUnfold, MatchBindsEachVariableOnceAndRewritesAtEveryPosition) {
  auto p = rules::parse_term("(ewadd ?x ?x)");
  EXPECT_TRUE(match_term(p, rules::parse_term("(ewadd (relu ?a) (relu ?a))")));
  EXPECT_FALSE(match_term(p, rules::parse_term("(ewadd (relu ?a) (relu ?b))")));
  EXPECT_FALSE(match_term(rules::parse_term("(permute 0_2_1_3 ?x)"),
                          rules::parse_term("(permute 0_1_3_2 ?a)")));  // a literal parameter
  // The swap of the middle axes read right to left: every permute 0_2_3_1 in the term, one at
  // a time, becomes the two swaps it composes.
  TermRewrite r = term_rewrite(axioms(), "permute-middle-then-last~rev");
  auto t = rules::parse_term("(ewadd (permute 0_2_3_1 ?a) (relu (permute 0_2_3_1 ?b)))");
  EXPECT_EQ(texts(rewrites_once(t, r)),
            (std::vector<std::string>{
                "(ewadd (permute 0_1_3_2 (permute 0_2_1_3 ?a)) (relu (permute 0_2_3_1 ?b)))",
                "(ewadd (permute 0_2_3_1 ?a) (relu (permute 0_1_3_2 (permute 0_2_1_3 ?b))))"}));
}

TEST(GenUnfold, AxiomsThatCannotRewriteTermsAreRefusedByName) {
  auto refused = [](const std::string& name, const std::string& why) {
    expect_error([&] { term_rewrite(axioms(), name); }, why);
  };
  refused("no-such-axiom", "no axiom named no-such-axiom");
  refused("concat-conv-weight", "has conditions");  // (where ...): not checked on terms
  refused("split0-concat~rev", "does not bind");    // ?y appears on the left only
}

TEST(GenUnfold, MultiHeadAttentionUnfoldsIntoTheFormsExportersWrite) {
  UnfoldOptions o;
  o.terms = {"(ort_mha_heads ?p_heads 1 ?q (smul ?k ?c) ?v)"};
  o.unfold = {"ort-mha-heads", "attention-packed-heads", "attention-sdpa-heads"};
  o.via = {"permute-middle-then-last", "split-axis-smul", "permute-smul"};
  o.depth = 0;
  UnfoldResult base = unfold_fused(axioms(), o);
  ASSERT_EQ(base.equalities.size(), 1u);  // the definition alone
  o.depth = 4;
  UnfoldResult r = unfold_fused(axioms(), o);
  EXPECT_EQ(r.unfolded, 1u);
  EXPECT_GT(r.equalities.size(), 4u);
  // Hugging Face's key once graphsub has moved both scale factors onto it: split, moved
  // straight into its transpose, scaled.
  const std::string hf =
      "(smul (permute 0_2_3_1 (split_axis 2 ?p_heads ?b)) ?c)";  // variables renamed a, b, ...
  bool found = std::any_of(r.equalities.begin(), r.equalities.end(),
                           [&](const Equality& e) { return e.key.find(hf) != std::string::npos; });
  EXPECT_TRUE(found);
  // Every one is proved from the axioms.
  verify::VerifyOptions vo;
  vo.threads = 2;
  vo.fallback_types = {TensorType{.shape = {1, 2, 4}}, TensorType{}};
  verify::Verifier v(axioms(), vo);
  for (const Equality& e : r.equalities) {
    EXPECT_TRUE(v.verify(library_rule(e)).proved()) << e.key;
  }
}

// MultiHeadAttention with an attention bias has two definitions (a bias broadcast over the
// heads, added by add; one of the scores' shape, by ewadd): each gives its own form, and both are
// proved.
TEST(GenUnfold, EachDefinitionThatAppliesGivesItsOwnForm) {
  UnfoldOptions o;
  o.terms = {"(ort_mha_heads_masked ?p_heads 1 ?q ?k ?v ?m)"};
  o.unfold = {"ort-mha-heads-masked", "ort-mha-heads-masked-full"};
  o.depth = 0;
  UnfoldResult r = unfold_fused(axioms(), o);
  ASSERT_EQ(r.equalities.size(), 2u);
  EXPECT_EQ(r.forms, 2u);
  bool add = false, ewadd = false;
  for (const Equality& e : r.equalities) {
    add = add || e.key.find("(softmax (add ") != std::string::npos;
    ewadd = ewadd || e.key.find("(softmax (ewadd ") != std::string::npos;
  }
  EXPECT_TRUE(add);
  EXPECT_TRUE(ewadd);
  o.unfold.pop_back();  // one definition: one form
  EXPECT_EQ(unfold_fused(axioms(), o).equalities.size(), 1u);
  verify::VerifyOptions vo;
  vo.threads = 2;
  vo.fallback_types = {TensorType{.shape = {1, 2, 4}}, TensorType{.shape = {1, 2, 2, 2}},
                       TensorType{}};
  verify::Verifier v(axioms(), vo);
  for (const Equality& e : r.equalities) EXPECT_TRUE(v.verify(library_rule(e)).proved()) << e.key;
}

TEST(GenUnfold, BadTermsAndOptionsAreErrors) {
  UnfoldOptions o;
  o.unfold = {"ort-mha-heads"};
  auto fails = [&](const std::string& term, const std::string& why) {
    o.terms = {term};
    expect_error([&] { unfold_fused(axioms(), o); }, why);
  };
  fails("(ort_mha_heads ?h 1 ?q ?k ?v)", "name it ?p_heads");
  fails("(ort_mha_heads 2 1 ?q ?k)", "expects 2 parameter(s) then 3 tensor argument(s)");
  fails("(no_such_op ?x)", "unknown operator 'no_such_op'");
  fails("(ort_mha_heads ?p_heads 1 ?p_q ?k ?v)", "has a parameter's name");
  fails("(relu ?x)", "no defining axiom applies");
  o.depth = 9;
  fails("(ort_mha_heads ?p_heads 1 ?q ?k ?v)", "depth 9");
}

}  // namespace
}  // namespace graphsub::gen
