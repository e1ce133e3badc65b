// The shipped rule library, rules/default.rules: it parses against the axioms, its header
// names the command that produced it, and the rules TASO's authors knew by hand are in it,
// found by the generator (checked by structural matching, up to renaming of variables and with
// parameter variables standing for any value).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "rules/orientations.h"
#include "rules/rule_parser.h"

namespace graphsub {
namespace {

using rules::Term;
using rules::TermPtr;

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

const std::string& library_path() {
  static const std::string p = std::string(GRAPHSUB_SOURCE_DIR) + "/rules/default.rules";
  return p;
}

const rules::RuleSet& library() {
  static const rules::RuleSet lib = [] {
    rules::RuleSet ax =
        rules::load_rules(std::string(GRAPHSUB_SOURCE_DIR) + "/specs/operators.axioms");
    return rules::load_rules(library_path(), &ax);
  }();
  return lib;
}

// Pattern variables (?x) bind to any subterm consistently; a literal parameter in the pattern
// also matches a parameter variable of the rule (the rule holds for every value).
bool match(const Term& p, const TermPtr& t, std::map<std::string, std::string>& b) {
  if (p.kind == Term::Kind::Var) {
    std::string s = rules::term_str(t);
    auto [it, fresh] = b.emplace(p.name, s);
    return fresh || it->second == s;
  }
  if (p.kind != Term::Kind::App) {
    if (t->kind == Term::Kind::Var) return true;
    return t->kind == p.kind && t->name == p.name && t->value == p.value;
  }
  if (t->kind != Term::Kind::App || t->name != p.name || t->args.size() != p.args.size())
    return false;
  for (size_t i = 0; i < p.args.size(); ++i)
    if (!match(*p.args[i], t->args[i], b)) return false;
  return true;
}

bool side_matches(const std::vector<std::string>& pat, const std::vector<TermPtr>& side,
                  std::map<std::string, std::string>& b) {
  if (pat.size() != side.size()) return false;
  std::vector<size_t> perm(side.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  do {
    std::map<std::string, std::string> trial = b;
    bool ok = true;
    for (size_t i = 0; ok && i < pat.size(); ++i)
      ok = match(*rules::parse_term(pat[i]), side[perm[i]], trial);
    if (ok) {
      b = trial;
      return true;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  return false;
}

// The rules (either direction) with these two sides.
std::vector<const rules::Rule*> library_rules(const std::vector<std::string>& a,
                                              const std::vector<std::string>& b) {
  std::vector<const rules::Rule*> out;
  for (auto& r : library().rules) {
    std::map<std::string, std::string> m1;
    std::map<std::string, std::string> m2;
    if ((side_matches(a, r.source, m1) && side_matches(b, r.target, m1)) ||
        (side_matches(b, r.source, m2) && side_matches(a, r.target, m2)))
      out.push_back(&r);
  }
  return out;
}

bool library_has(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return !library_rules(a, b).empty();
}

TEST(GenLibrary, ParsesAndNamesItsCommand) {
  std::string text = read(library_path());
  ASSERT_FALSE(text.empty()) << library_path();
  EXPECT_NE(text.find("graphsub generate --max-ops"), std::string::npos);
  EXPECT_NE(text.find("after common-subgraph pruning"), std::string::npos);
  EXPECT_GT(library().rules.size(), 100u);
  // Each equality once, named by its content (the parser checks that the hash matches).
  for (const auto& r : library().rules) {
    EXPECT_TRUE(r.both_ways) << r.name;
    EXPECT_TRUE(rules::is_content_name(r.name)) << r.name;
  }
}

TEST(GenLibrary, TwoMatmulsSharingTheirLeftOperandMerge) {
  EXPECT_TRUE(library_has({"(matmul none ?x ?y)", "(matmul none ?x ?z)"},
                          {"(split0 1 (matmul none ?x (concat 1 ?y ?z)))",
                           "(split1 1 (matmul none ?x (concat 1 ?y ?z)))"}));
}

TEST(GenLibrary, ConvWithReluActivationIsReluOfConv) {
  EXPECT_TRUE(library_has({"(conv 1 same relu ?x ?w)"}, {"(relu (conv 1 same none ?x ?w))"}));
}

TEST(GenLibrary, TwoConvsOnOneInputMergeThroughAConcatOfKernels) {
  EXPECT_TRUE(library_has({"(conv 1 same none ?x ?w)", "(conv 1 same none ?x ?v)"},
                          {"(split0 1 (conv 1 same none ?x (concat 0 ?w ?v)))",
                           "(split1 1 (conv 1 same none ?x (concat 0 ?w ?v)))"}));
}

// The merge is false for grouped convs (concatenating kernels changes the groups): the
// library states it only for dense convs, i.e. under (where (= (dim ?w 1) (dim ?x 1)) ...).
TEST(GenLibrary, ConvMergeHoldsOnlyUnderTheDenseCondition) {
  auto merges = library_rules({"(conv 1 same none ?x ?w)", "(conv 1 same none ?x ?v)"},
                              {"(split0 1 (conv 1 same none ?x (concat 0 ?w ?v)))",
                               "(split1 1 (conv 1 same none ?x (concat 0 ?w ?v)))"});
  auto concat_form = library_rules({"(concat 1 (conv 1 same none ?x ?w) (conv 1 same none ?x ?v))"},
                                   {"(conv 1 same none ?x (concat 0 ?w ?v))"});
  merges.insert(merges.end(), concat_form.begin(), concat_form.end());
  ASSERT_FALSE(merges.empty());
  for (const rules::Rule* r : merges) {
    ASSERT_EQ(r->constraints.size(), 2u) << r->name;
    for (auto& c : r->constraints)
      EXPECT_NE(rules::term_str(c).find("(dim ?"), std::string::npos) << r->name;
  }
}

TEST(GenLibrary, AveragePoolingIsAConvWithCpool) {
  EXPECT_TRUE(library_has({"(poolavg 3 1 same ?x)"}, {"(conv 1 same none ?x (cpool 3))"}));
}

}  // namespace
}  // namespace graphsub
