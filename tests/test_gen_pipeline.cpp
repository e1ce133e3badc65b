// The generator end to end on small configurations: it finds known rules (identities,
// fusions, the matmul merge through concat and split), outputs are deterministic across
// thread counts, the stage counts are consistent, and every emitted rule parses and holds.
// The prover here is the bounded numerical test of src/rules (the Z3 verifier is exercised
// by test_gen_library).
#include <gtest/gtest.h>

#include "gen/gen_op.h"
#include "gen/library_file.h"
#include "rules/bounded_check.h"
#include "rules/rule_parser.h"
#include "test_gen_util.h"

namespace graphsub::gen {
namespace {

const rules::RuleSet& axioms() {
  static const rules::RuleSet a =
      rules::load_rules(std::string(GRAPHSUB_SOURCE_DIR) + "/specs/operators.axioms");
  return a;
}

// Proves a rule when it holds on a bounded set of shapes.
Prover numeric_prover() {
  return [](const std::vector<rules::Rule>& batch) {
    rules::ShapeSpace space{.ranks = {0, 2, 4}, .dims = {2, 3}, .kernel_dims = {1, 3}};
    rules::BoundedOptions bo;
    bo.max_per_params = 3;
    std::vector<ProofOutcome> out;
    for (auto& r : batch) {
      rules::BoundedResult b = rules::bounded_test(r, axioms(), space, bo);
      out.push_back({b.holds && b.instances > 0, b.counterexample});
    }
    return out;
  };
}

GeneratorOptions small_options(std::vector<std::string> ops, int max_ops, int threads = 2) {
  GeneratorOptions o;
  o.max_ops = max_ops;
  o.ops = std::move(ops);
  o.pool = {{"x1", {2, 4}, Role::Data},
            {"x2", {2, 4}, Role::Data},
            {"w1", {4, 4}, Role::Weight},
            {"w2", {4, 4}, Role::Weight}};
  o.domains = domains_of(axioms());
  o.domains["act"] = {std::string("none"), std::string("relu")};
  o.domains["axis"] = {int64_t{0}, int64_t{1}};
  o.threads = threads;
  return o;
}

bool has_rule(const GeneratorResult& r, std::vector<std::string> lhs,
              std::vector<std::string> rhs) {
  Equality e;
  for (auto& t : lhs) e.lhs.push_back(rules::parse_term(t));
  for (auto& t : rhs) e.rhs.push_back(rules::parse_term(t));
  canonicalize(e);
  for (auto& x : r.rules)
    if (x.key == e.key) return true;
  return false;
}

const GeneratorResult& matmul_run() {
  static const GeneratorResult r =
      run_generator(small_options({"matmul", "transpose", "relu", "concat", "split"}, 3),
                    numeric_prover(), null_reporter());
  return r;
}

TEST(GenPipeline, FindsKnownRules) {
  const GeneratorResult& r = matmul_run();
  EXPECT_TRUE(has_rule(r, {"(transpose (transpose ?x))"}, {"?x"}));
  EXPECT_TRUE(has_rule(r, {"(matmul relu ?x ?y)"}, {"(relu (matmul none ?x ?y))"}));
  EXPECT_TRUE(has_rule(r, {"(transpose (matmul none ?x ?y))"},
                       {"(matmul none (transpose ?y) (transpose ?x))"}));
  // Two matmuls sharing their left operand: one matmul with concatenated weights and a split
  // (found through the disconnected-partner search, it has two outputs).
  EXPECT_TRUE(has_rule(r, {"(matmul none ?x ?y)", "(matmul none ?x ?z)"},
                       {"(split0 1 (matmul none ?x (concat 1 ?y ?z)))",
                        "(split1 1 (matmul none ?x (concat 1 ?y ?z)))"}));
  EXPECT_TRUE(
      has_rule(r, {"(relu ?x)", "(relu ?y)"},
               {"(split0 0 (relu (concat 0 ?x ?y)))", "(split1 0 (relu (concat 0 ?x ?y)))"}));
}

TEST(GenPipeline, StageCountsShrinkInOrder) {
  const GeneratorResult& r = matmul_run();
  std::vector<std::string> names;
  for (auto& s : r.stages) names.push_back(s.stage);
  ASSERT_EQ(names, (std::vector<std::string>{"graphs enumerated", "buckets (fingerprints shared)",
                                             "candidate pairs", "after float re-test", "proved",
                                             "after renaming", "after parameter lifting",
                                             "after common-subgraph pruning"}));
  for (size_t i = 3; i + 1 < r.stages.size(); ++i)
    EXPECT_GE(r.stages[i].count, r.stages[i + 1].count) << r.stages[i + 1].stage;
  EXPECT_GE(r.stages[2].count, r.stages[3].count);
  EXPECT_EQ(r.stages.back().count, r.rules.size());
  EXPECT_GT(r.rules.size(), 10u);
}

TEST(GenPipeline, EveryEmittedRuleParsesAndHolds) {
  const GeneratorResult& r = matmul_run();
  LibraryInfo info{"test", "pool", "specs/operators.axioms"};
  rules::RuleSet parsed = rules::parse_rules(library_text(r, info), "generated.rules", &axioms());
  ASSERT_GE(parsed.rules.size(), r.rules.size());
  std::vector<ProofOutcome> again = numeric_prover()(parsed.rules);
  for (size_t i = 0; i < again.size(); ++i)
    EXPECT_TRUE(again[i].proved) << parsed.rules[i].name << ": " << again[i].reason;
}

TEST(GenPipeline, SameLibraryOnAnyNumberOfThreads) {
  auto opts = small_options({"ewadd", "ewmul", "relu", "transpose"}, 3, 1);
  LibraryInfo info{"test", "pool", "axioms"};
  std::string one = library_text(run_generator(opts, numeric_prover(), null_reporter()), info);
  opts.threads = 3;
  std::string three = library_text(run_generator(opts, numeric_prover(), null_reporter()), info);
  EXPECT_EQ(one, three);
}

TEST(GenPipeline, UnprovableCandidatesAreReportedNotEmitted) {
  // A prover that refuses everything with relu in it: those rules go to the report.
  Prover picky = [](const std::vector<rules::Rule>& batch) {
    std::vector<ProofOutcome> out;
    for (auto& r : batch) {
      std::string text = rules::term_str(r.source[0]) + rules::term_str(r.target[0]);
      bool relu = text.find("relu") != std::string::npos;
      out.push_back({!relu, relu ? "refused" : ""});
    }
    return out;
  };
  GeneratorResult r =
      run_generator(small_options({"matmul", "relu", "transpose"}, 2), picky, null_reporter());
  for (auto& e : r.rules)
    for (auto& t : e.lhs) EXPECT_EQ(rules::term_str(t).find("relu"), std::string::npos);
  ASSERT_FALSE(r.unproved.empty());
  EXPECT_EQ(r.unproved[0].reason, "refused");
  std::string report = unproved_text(r, LibraryInfo{"cmd", "pool", "axioms"});
  EXPECT_NE(report.find("refused"), std::string::npos);
}

}  // namespace
}  // namespace graphsub::gen
