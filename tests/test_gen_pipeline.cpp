// The generator end to end on small configurations: it finds known rules (identities,
// fusions, the matmul merge through concat and split), outputs are deterministic across
// thread counts, the stage counts are consistent, and every emitted rule parses and holds.
// The prover here is the bounded numerical test of src/rules (the Z3 verifier is exercised
// by test_gen_library).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "gen/library_file.h"
#include "gen/space/gen_op.h"
#include "rules/bounded_check.h"
#include "rules/rule_parser.h"
#include "test_gen_util.h"

namespace graphsub::gen {
namespace {

const rules::RuleSet& axioms() {
  return testing::shipped_axioms();
}

// Proves a rule when it holds on a bounded set of shapes.
// `dims`, `per_params`: the shapes tested (every one when per_params is 0).
Prover numeric_prover(std::vector<int64_t> dims = {2, 3}, uint64_t per_params = 3) {
  return [dims, per_params](const std::vector<rules::Rule>& batch) {
    rules::ShapeSpace space{
        .ranks = {0, 2, 4}, .dims = dims, .kernel_dims = {1, 3}, .fallback_ranks = {3}};
    rules::BoundedOptions bo;
    bo.max_per_params = per_params;
    std::vector<ProofOutcome> out;
    for (auto& r : batch) {
      rules::BoundedResult b = rules::bounded_test(r, axioms(), space, bo);
      out.push_back({b.holds && b.instances > 0, b.counterexample, !b.holds && b.instances > 0});
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

// (= (dim ?w 1) (dim ?x 1)) for "w x": the kernel w of a conv over x is dense.
rules::TermPtr dense_condition(const std::string& kernel_and_data) {
  auto dim1 = [](const std::string& v) {
    return rules::Term::app("dim", {rules::Term::var(v), rules::Term::integer(1)});
  };
  auto sp = kernel_and_data.find(' ');
  return rules::Term::app(
      "=", {dim1(kernel_and_data.substr(0, sp)), dim1(kernel_and_data.substr(sp + 1))});
}

bool has_rule(const GeneratorResult& r, std::vector<std::string> lhs, std::vector<std::string> rhs,
              std::vector<std::string> where = {}) {
  Equality e;
  for (auto& t : lhs) e.lhs.push_back(rules::parse_term(t));
  for (auto& t : rhs) e.rhs.push_back(rules::parse_term(t));
  for (auto& t : where) e.conditions.push_back(dense_condition(t));
  canonicalize(e);
  for (auto& x : r.rules)
    if (x.key == e.key) return true;
  return false;
}

bool has_rule_key(const GeneratorResult& r, const std::string& key) {
  return std::any_of(r.rules.begin(), r.rules.end(), [&](auto& x) { return x.key == key; });
}

// One equality as text, both sides.
std::string library_rule_text(const Equality& e) {
  std::string s;
  for (auto& t : e.lhs) s += rules::term_str(t) + " ";
  for (auto& t : e.rhs) s += rules::term_str(t) + " ";
  return s;
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
  // The time report accounts for every prover call, by verdict kind.
  uint64_t calls = 0;
  for (auto& [kind, t] : r.prover_times) {
    calls += t.calls;
    EXPECT_LE(t.median_ms, t.max_ms) << kind;
  }
  EXPECT_EQ(calls, r.verifier_calls);
  EXPECT_TRUE(r.prover_times.count("proved"));
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

// At max_ops 4 the largest graphs read only representative values (Space::minimal_reads): far
// fewer candidates, the same known rules, every emitted rule holds, and the library is the same
// on any number of threads (representatives are the smallest, whichever thread saw them first).
// Reductions and gathers join the enumeration with their list parameters; --with-ops keeps
// exactly the rules that use one of the named operators, the rest left to other libraries.
TEST(GenPipeline, WithOpsKeepsTheRulesOfTheNamedOperators) {
  GeneratorOptions all = small_options({"reduce_sum", "gather", "matmul", "relu", "ewadd"}, 2);
  all.domains["indices"] = {int64_t{0}, std::string("1_0")};
  GeneratorResult everything = run_generator(all, numeric_prover(), null_reporter());
  EXPECT_TRUE(has_rule(everything, {"(reduce_sum 1 (matmul none ?x ?y))"},
                       {"(matmul none ?x (reduce_sum 1 ?y))"}));
  EXPECT_TRUE(has_rule(everything, {"(gather 0 1_0 (relu ?x))"}, {"(relu (gather 0 1_0 ?x))"}));
  EXPECT_TRUE(has_rule(everything, {"(matmul relu ?x ?y)"}, {"(relu (matmul none ?x ?y))"}));

  GeneratorOptions some = all;
  some.with_ops = {"reduce_sum"};
  GeneratorResult r = run_generator(some, numeric_prover(), null_reporter());
  EXPECT_EQ(r.stages.back().stage, "with a --with-ops operator");
  EXPECT_EQ(r.stages.back().count, r.rules.size());
  size_t with_sum = 0;
  for (auto& e : everything.rules) {
    std::string text = library_rule_text(e);
    bool uses = text.find("(reduce_sum ") != std::string::npos;
    with_sum += uses;
    EXPECT_EQ(has_rule_key(r, e.key), uses) << text;
  }
  EXPECT_EQ(r.rules.size(), with_sum);
  EXPECT_GT(with_sum, 0u);
  some.with_ops = {"no_such_op"};
  EXPECT_THROW(run_generator(some, numeric_prover(), null_reporter()), Error);
}

TEST(GenPipeline, MinimalReadsAtFourOperators) {
  auto opts = small_options({"matmul", "transpose", "relu"}, 4, 1);
  GeneratorResult minimal = run_generator(opts, numeric_prover(), null_reporter());
  EXPECT_TRUE(minimal.minimal_reads);
  EXPECT_GT(minimal.redundant_values, 0u);
  opts.threads = 3;
  LibraryInfo info{"test", "pool", "axioms"};
  EXPECT_EQ(library_text(minimal, info),
            library_text(run_generator(opts, numeric_prover(), null_reporter()), info));
  opts.minimal_reads_from_ops = 0;
  GeneratorResult all = run_generator(opts, numeric_prover(), null_reporter());
  EXPECT_FALSE(all.minimal_reads);
  EXPECT_LT(minimal.graphs, all.graphs);
  EXPECT_LT(minimal.stages[2].count, all.stages[2].count);  // candidate pairs
  for (const GeneratorResult* r : {&minimal, &all}) {
    EXPECT_TRUE(has_rule(*r, {"(transpose (matmul none ?x ?y))"},
                         {"(matmul none (transpose ?y) (transpose ?x))"}));
    EXPECT_TRUE(has_rule(*r, {"(matmul relu ?x ?y)"}, {"(relu (matmul none ?x ?y))"}));
  }
  rules::RuleSet parsed =
      rules::parse_rules(library_text(minimal, info), "generated.rules", &axioms());
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
  for (auto& u : r.unproved)
    EXPECT_TRUE(u.reason == "refused" || u.reason.rfind("not tried: ", 0) == 0) << u.reason;
  std::string report = unproved_text(r, LibraryInfo{"cmd", "pool", "axioms"});
  EXPECT_NE(report.find("refused"), std::string::npos);
}

// Rules with more tensor variables than max_prover_vars never reach the prover; they are
// reported as not tried, and the library holds only smaller ones.
TEST(GenPipeline, RulesWithTooManyVariablesAreNotSentToTheProver) {
  int largest_sent = 0;
  Prover counting = [&largest_sent](const std::vector<rules::Rule>& batch) {
    for (auto& r : batch)
      largest_sent = std::max(largest_sent, static_cast<int>(r.tensor_vars.size()));
    return numeric_prover()(batch);
  };
  auto opts = small_options({"matmul", "ewadd", "transpose"}, 3);
  GeneratorResult all = run_generator(opts, counting, null_reporter());
  EXPECT_GE(largest_sent, 3);  // e.g. distributivity
  EXPECT_EQ(all.too_many_vars, 0u);
  opts.max_prover_vars = 2;
  largest_sent = 0;
  GeneratorResult capped = run_generator(opts, counting, null_reporter());
  EXPECT_EQ(largest_sent, 2);
  EXPECT_GT(capped.too_many_vars, 0u);
  EXPECT_LT(capped.rules.size(), all.rules.size());
  size_t reported = 0;
  for (auto& u : capped.unproved)
    reported += u.reason.find("tensor variables, more than the 2") != std::string::npos;
  EXPECT_GT(reported, 0u);
}

// Prune before proving: a class whose more general form (a class too) was not proved is not
// sent to the prover; the report names that form and its reason.
TEST(GenPipeline, ClassesWhoseGeneralFormFailedAreNotTried) {
  std::set<std::string> sent;  // canonical keys of the rules the prover saw
  Prover no_transpose = [&sent](const std::vector<rules::Rule>& batch) {
    std::vector<ProofOutcome> out = numeric_prover()(batch);
    for (size_t i = 0; i < batch.size(); ++i) {
      Equality e{.lhs = batch[i].source, .rhs = batch[i].target};
      canonicalize(e);
      sent.insert(e.key);
      std::string text;
      for (auto& t : batch[i].source) text += rules::term_str(t);
      if (text.find("transpose") != std::string::npos)
        out[i] = {.proved = false, .reason = "refused", .kind = "refused"};
    }
    return out;
  };
  GeneratorResult r = run_generator(small_options({"matmul", "transpose", "relu", "ewadd"}, 3),
                                    no_transpose, null_reporter());
  EXPECT_GT(r.not_tried, 0u);
  std::set<std::string> refused;
  for (auto& u : r.unproved)
    if (u.reason == "refused") refused.insert(u.key);
  uint64_t not_tried = 0;
  const std::string prefix = "not tried: its more general form ";
  for (auto& u : r.unproved) {
    if (u.reason == "refused") continue;
    ASSERT_EQ(u.reason.rfind(prefix, 0), 0u) << u.reason;
    ++not_tried;
    EXPECT_FALSE(sent.count(u.key)) << u.key;
    // The named form is a class the prover refused, and this one is more specific.
    std::string general = u.reason.substr(prefix.size());
    general = general.substr(0, general.rfind(" was not proved (refused)"));
    EXPECT_TRUE(refused.count(general)) << general;
  }
  EXPECT_EQ(not_tried, r.not_tried);
  std::string report = unproved_text(r, LibraryInfo{"cmd", "pool", "axioms"});
  EXPECT_NE(report.find(fmt::format("{} of them were not sent to the prover", r.not_tried)),
            std::string::npos);
  // Rules without transpose are unaffected: the same library as with a prover that proves
  // everything the numeric test accepts, minus the transpose rules.
  GeneratorResult all = run_generator(small_options({"matmul", "transpose", "relu", "ewadd"}, 3),
                                      numeric_prover(), null_reporter());
  for (auto& e : all.rules) {
    std::string text;
    for (auto& t : e.lhs) text += rules::term_str(t);
    for (auto& t : e.rhs) text += rules::term_str(t);
    if (text.find("transpose") != std::string::npos) continue;
    bool found = false;
    for (auto& x : r.rules) found = found || x.key == e.key;
    EXPECT_TRUE(found) << e.key;
  }
}

// Two convs on one input merge through a concat of their kernels only when both are dense
// (a grouped conv's groups change with the kernel count). The pool has dense kernels k1, k2
// and a depth-wise kernel d1: the merge is found on k1, k2, refuted as stated, and emitted
// under the density conditions; rules that hold for grouped convs too stay unconditional.
TEST(GenPipeline, ConvMergeIsEmittedUnderTheDenseCondition) {
  GeneratorOptions o;
  o.max_ops = 3;
  o.ops = {"conv", "concat", "split"};
  o.pool = {{"i1", {1, 2, 3, 3}, Role::Data},
            {"k1", {2, 2, 3, 3}, Role::Weight},
            {"k2", {2, 2, 3, 3}, Role::Weight},
            {"d1", {2, 1, 3, 3}, Role::Weight}};
  o.domains = domains_of(axioms());
  o.domains["stride"] = {int64_t{1}};
  o.domains["padding"] = {std::string("same")};
  o.domains["act"] = {std::string("none")};
  o.domains["axis"] = {int64_t{0}, int64_t{1}};
  o.threads = 2;
  // All shapes with dimensions 1 and 2: the test sees grouped convs (a kernel reading 1 of 2
  // input channels).
  Prover exhaustive = numeric_prover({1, 2}, 0);
  GeneratorResult r = run_generator(o, exhaustive, null_reporter());
  const std::vector<std::string> lhs{"(conv 1 same none ?x ?v)", "(conv 1 same none ?x ?w)"};
  const std::vector<std::string> rhs{"(split0 1 (conv 1 same none ?x (concat 0 ?v ?w)))",
                                     "(split1 1 (conv 1 same none ?x (concat 0 ?v ?w)))"};
  EXPECT_FALSE(has_rule(r, lhs, rhs));
  EXPECT_TRUE(has_rule(r, lhs, rhs, {"v x", "w x"}));
  EXPECT_TRUE(has_rule(r, {"(concat 1 (conv 1 same none ?x ?v) (conv 1 same none ?x ?w))"},
                       {"(conv 1 same none ?x (concat 0 ?v ?w))"}, {"v x", "w x"}));
  EXPECT_GE(r.conditional, 2u);
  // Every emitted rule with conditions mentions only dense-conv conditions, and parses.
  LibraryInfo info{"test", "pool", "specs/operators.axioms"};
  rules::RuleSet parsed = rules::parse_rules(library_text(r, info), "generated.rules", &axioms());
  size_t with_conditions = 0;
  for (auto& rule : parsed.rules) with_conditions += !rule.constraints.empty();
  EXPECT_GE(with_conditions, 2u);
  std::vector<ProofOutcome> again = exhaustive(parsed.rules);
  for (size_t i = 0; i < again.size(); ++i)
    EXPECT_TRUE(again[i].proved) << parsed.rules[i].name << ": " << again[i].reason;
}

// Heads split out of a hidden axis need an even axis in the re-test too: with the default
// re-test shape (each dimension above 1 one larger, 1x3x5) every graph that splits 4 into two
// heads fails there and nothing is found; with the pool's own re-test shape (1x3x6) the
// generator finds that a merge undoes a split and that a scalar factor moves through both.
TEST(GenPipeline, HeadSplitsAreFoundWithAnEvenReTestShape) {
  auto run = [](const std::vector<PoolTensor>& pool) {
    GeneratorOptions o;
    o.max_ops = 3;
    o.ops = {"split_axis", "merge_axes", "permute", "smul"};
    o.pool = pool;
    o.domains = domains_of(axioms());
    o.domains["axis"] = {int64_t{2}};
    o.threads = 2;
    // Rank-3 instances: the axioms' space tests them at its fallback rank.
    return run_generator(o, numeric_prover({1, 2, 4}), null_reporter());
  };
  // The library's text (one axis and one head count: nothing lifted).
  auto text = [](const GeneratorResult& r) {
    return library_text(r, LibraryInfo{"test", "pool", "specs/operators.axioms"});
  };
  const std::string undo = "(lhs (merge_axes 2 (split_axis 2 2 ?a)))\n  (rhs ?a)";
  auto plain = parse_pool("x1:1x2x4:data,s1:scalar");
  EXPECT_EQ(text(run(plain)).find(undo), std::string::npos);
  auto even = parse_pool("x1:1x2x4:data:1x3x6,s1:scalar");
  ASSERT_EQ(even[0].retest_shape, (Shape{1, 3, 6}));
  EXPECT_EQ(pool_str(even), "x1:1x2x4:data:1x3x6,s1:scalar");
  const std::string lib = text(run(even));
  EXPECT_NE(lib.find(undo), std::string::npos) << lib;
  EXPECT_NE(lib.find("(lhs (smul (split_axis 2 2 ?a) ?b))\n  (rhs (split_axis 2 2 (smul ?a ?b)))"),
            std::string::npos)
      << lib;
  EXPECT_NE(lib.find("(lhs (permute 0_1_3_2 (permute 0_2_1_3 ?a)))\n  (rhs (permute 0_2_3_1 ?a))"),
            std::string::npos)
      << lib;
  EXPECT_THROW(parse_pool("x1:1x2x4:data:3x6"), Error);  // another rank
}

}  // namespace
}  // namespace graphsub::gen
