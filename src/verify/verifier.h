#pragma once
// The verifier: proves rewrite rules from the axioms of specs/operators.axioms with Z3.
//
// For each rule it first tests a few small instances numerically (src/rules/bounded_check.h):
// a rule that is numerically false is rejected at once, naming the differing output. Then it
// asks Z3 whether some output could differ from its replacement while every axiom holds
// (quantified, instantiated by E-matching on the axioms' patterns); "unsat" proves the rule.
// Each rule gets a fresh Z3 solver and context by default (or, with reuse_context, its own
// push/pop scope of a per-thread solver that holds the axioms), so verdicts do not
// depend on the order in which rules are checked (for the scopes: checked on samples and in
// tests/test_verify.cpp), and rules are checked in parallel (Z3 contexts are not shared between
// threads).
//
//   rules::RuleSet axioms = rules::load_rules(rules::default_axioms_path());
//   verify::Verifier v(axioms);
//   verify::RuleVerdict r = v.verify(rule);          // one rule
//   auto all = v.verify_all(rules.rules, reporter);   // many, in parallel
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/report.h"
#include "rules/bounded_check.h"
#include "rules/rule.h"

namespace graphsub::verify {

enum class Verdict : uint8_t {
  Proved,
  Counterexample,  // numerically false (or a model found by the solver)
  Unknown,         // the solver gave up without a proof (incomplete quantifier reasoning)
  Timeout,         // the per-rule time (or resource) limit ran out
  Invalid,         // the rule cannot be checked (no well-typed instance, undeclared domain, ...)
};
const char* verdict_name(Verdict v);

struct RuleVerdict {
  std::string name;
  Verdict verdict = Verdict::Unknown;
  int output = -1;        // the output that differs or could not be proved (-1: none/all)
  std::string reason;     // empty when proved
  uint64_t tested = 0;    // instances tested numerically before the solver ran
  double numeric_ms = 0;  // time of the numeric test
  double solver_ms = 0;   // time in Z3
  double total_ms() const { return numeric_ms + solver_ms; }
  bool proved() const { return verdict == Verdict::Proved; }
};

struct VerifyOptions {
  unsigned timeout_ms = 10000;  // per rule, all outputs together
  // Z3's deterministic resource limit per output (0: none). Unlike the time limit, it gives
  // the same verdicts on any machine and load.
  unsigned rlimit = 0;
  int threads = 0;  // verify_all: 0 = every hardware thread
  bool numeric_test = true;
  // The small instances tested before the solver: a few per parameter assignment, spread
  // over all well-typed ones, without and with split points on the inputs.
  rules::ShapeSpace numeric_space{
      .ranks = {0, 2, 4}, .dims = {1, 2}, .kernel_dims = {1, 3}, .split_dims = {2}};
  uint64_t numeric_per_params = 4;
  // Shapes where the rules are known to type-check (the generator's pool): when no instance
  // of a rule type-checks among the small shapes, the numeric test tries its variables at
  // these before it searches the axioms' whole shape space (which costs far more).
  std::vector<TensorType> fallback_types;
  // Bound of the numeric test's instance search (rules/instances.h). A search past it counts
  // as finding no instance: the fallback types are tried, and if they too fail, the rule is
  // Invalid with a reason that says so (rather than the search exhausting memory).
  size_t max_partial_instances = rules::kMaxPartialInstances;
  // Keep one Z3 context and solver per thread with the axioms asserted once, and check each
  // rule in its own push/pop scope, instead of a fresh context and solver per rule (setting up
  // and internalizing the axioms was most of a call's solver time: 2,333 sampled rules took
  // 4.4 s with a fresh solver per rule in a kept context and 0.5 s this way, with the same
  // verdicts in three orders).
  bool reuse_context = false;
  uint64_t seed = 1;
};

class LazyWatchdog;

class Verifier {
 public:
  // `axioms` holds the axioms and the parameter domains (specs/operators.axioms).
  explicit Verifier(rules::RuleSet axioms, VerifyOptions opts = {});

  // Thread-safe; each call uses its own Z3 solver and context, or with reuse_context its own
  // push/pop scope of the calling thread's solver.
  RuleVerdict verify(const rules::Rule& r) const;
  // In parallel; results in the order of `rules`, independent of the number of threads.
  std::vector<RuleVerdict> verify_all(const std::vector<rules::Rule>& rules,
                                      Reporter& rep = null_reporter()) const;

  const rules::RuleSet& axioms() const { return axioms_; }
  const VerifyOptions& options() const { return opts_; }

 private:
  RuleVerdict numeric_test(const rules::Rule& r) const;
  RuleVerdict prove(const rules::Rule& r) const;

  rules::RuleSet axioms_;
  VerifyOptions opts_;
  uint64_t id_;  // tells this verifier's per-thread Z3 contexts from others'
  std::shared_ptr<LazyWatchdog> watchdog_;  // keeps the time limit (solver_watchdog.h)
};

}  // namespace graphsub::verify
