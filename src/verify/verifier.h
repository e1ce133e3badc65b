#pragma once
// The verifier: proves rewrite rules from the axioms of specs/operators.axioms with Z3.
//
// For each rule it first tests a few small instances numerically (src/rules/bounded_check.h):
// a rule that is numerically false is rejected at once, naming the differing output. Then it
// asks Z3 whether some output could differ from its replacement while every axiom holds
// (quantified, instantiated by E-matching on the axioms' patterns); "unsat" proves the rule.
// A rule the solver leaves open gets the exhaustive bounded test of `check-axioms` (up to a
// number of instances), so that a rule with a counterexample there is reported false, never
// "unknown". Each rule gets a fresh Z3 solver and context by default (or, with reuse_context,
// verify_all checks the rules of each of a fixed number of lanes in order, in push/pop scopes
// of one solver per lane that holds the axioms), so verdicts do not depend on the order in which
// rules are checked nor on the number of threads (tests/test_verify.cpp), and rules are checked in
// parallel (Z3 contexts are not shared between threads).
//
//   rules::RuleSet axioms = rules::load_rules("specs/operators.axioms");
//   verify::Verifier v(axioms);
//   verify::RuleVerdict r = v.verify(rule);          // one rule
//   auto all = v.verify_all(rules.rules, reporter);   // many, in parallel
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "ir/report.h"
#include "rules/bounded_check.h"
#include "rules/rule.h"

namespace graphsub::verify {

enum class Verdict : uint8_t {
  Proved,
  Counterexample,  // numerically false (or a model found by the solver)
  Unknown,         // the solver gave up without a proof (incomplete quantifier reasoning)
  Timeout,         // the per-rule resource (or time) limit ran out
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
  // Instances of the exhaustive bounded test run after the solver left the rule open (0: none).
  uint64_t exhaustive = 0;
  // Z3's resource count (the unit of VerifyOptions::rlimit) of the rule's checks, when
  // VerifyOptions::count_resources is set: what calibrates the resource limit.
  uint64_t resources = 0;
  double total_ms() const { return numeric_ms + solver_ms; }
  bool proved() const { return verdict == Verdict::Proved; }
};

// Thrown (and not turned into a verdict) when a check runs past the time limit of
// VerifyOptions::timeout_is_error: the caller's output must not depend on time.
class SafetyLimitExceeded : public Error {
 public:
  using Error::Error;
};

struct VerifyOptions {
  unsigned timeout_ms = 10000;  // per rule, all outputs together
  // A check past timeout_ms is a Timeout verdict, or with this set, SafetyLimitExceeded: for
  // callers whose output must be the same on any machine and load (the generator), which
  // bound the solver by `rlimit` and keep the time limit only as a safety net.
  bool timeout_is_error = false;
  // Z3's deterministic resource limit per output (0: none). Unlike the time limit, it gives
  // the same verdicts on any machine and load.
  unsigned rlimit = 0;
  // Read Z3's resource count around each check into RuleVerdict::resources (a statistics
  // query per check; for calibrating rlimit).
  bool count_resources = false;
  int threads = 0;  // verify_all: 0 = every hardware thread
  bool numeric_test = true;
  // The small instances tested before the solver: a few per parameter assignment, spread
  // over all well-typed ones, without and with split points on the inputs.
  rules::ShapeSpace numeric_space{
      .ranks = {0, 2, 4}, .dims = {1, 2}, .kernel_dims = {1, 3}, .split_dims = {2}};
  uint64_t numeric_per_params = 4;
  // When less than numeric_per_params: the instances tested before the solver (a cheap
  // refutation first); a rule the solver proves is then tested on all numeric_per_params
  // (the safety net under the axioms stays whole), one it leaves open is not tested further.
  // The generator sets 1: its candidates passed a numeric re-test already, most are open,
  // and testing all of them on every instance was most of its proving time (7.8 of 12.8 s
  // of the shipped library's proofs, thread time).
  uint64_t numeric_first_per_params = 0;  // 0: numeric_per_params
  // Shapes where the rules are known to type-check (the generator's pool): when no instance
  // of a rule type-checks among the small shapes, the numeric test tries its variables at
  // these before it searches the axioms' whole shape space (which costs far more).
  std::vector<TensorType> fallback_types;
  // Bound of the numeric test's instance search (rules/instances.h). A search past it counts
  // as finding no instance: the fallback types are tried, and if they too fail, the rule is
  // Invalid with a reason that says so (rather than the search exhausting memory).
  size_t max_partial_instances = rules::kMaxPartialInstances;
  // When the solver leaves a rule open (unknown or out of resources): the exhaustive bounded
  // test, every well-typed instance of the axioms' shape space and then of the fallback
  // types, up to this many instances in all (0: not run). A rule false there is reported
  // Counterexample. A count, not a time, so verdicts do not depend on load.
  uint64_t exhaustive_instances = 50000;
  // verify_all checks the rules in kSessionLanes lanes (rule k of a call in lane k mod
  // kSessionLanes), each lane one Z3 context and solver with the axioms asserted once, kept by
  // the verifier across calls, and each rule in its own push/pop scope, instead of a fresh
  // context and solver per rule (setting up and internalizing the axioms was most of a call's
  // solver time: 2,333 sampled rules took 4.4 s with a fresh solver per rule in a kept context
  // and 0.5 s with scopes, with the same verdicts in three orders). A lane's rules are checked
  // in order, whatever the threads and their timing, so each check sees the same solver
  // history on any machine and load, and its resource count is the same.
  bool reuse_context = false;
  uint64_t seed = 1;
};

// Lanes of verify_all with reuse_context: at most this many threads work at once, and the
// verifier keeps this many Z3 sessions, about 18 MiB each (`generate --max-ops 3` peaked at
// 334 MiB with one session per thread on 2 threads, 608 MiB with 16 lanes, 901 MiB with 32).
inline constexpr size_t kSessionLanes = 8;

// The lanes one process of several checks: lane l belongs to rank l mod ranks (ranks past
// kSessionLanes check none). The others' rules are left unchecked (Verdict::Unknown, reason
// "checked by another rank"), for the caller to fill in from their ranks.
struct LaneShare {
  int rank = 0, ranks = 1;
  bool owns_rule(size_t k) const {
    return static_cast<int>((k % kSessionLanes) % static_cast<size_t>(ranks)) == rank;
  }
};

class LazyWatchdog;
struct Z3Session;
struct SessionLanes;

class Verifier {
 public:
  // `axioms` holds the axioms and the parameter domains (specs/operators.axioms).
  explicit Verifier(rules::RuleSet axioms, VerifyOptions opts = {});

  // Thread-safe; each call uses its own Z3 solver and context.
  RuleVerdict verify(const rules::Rule& r) const;
  // In parallel; results in the order of `rules`, independent of the number of threads.
  // With `share` (and reuse_context), only the rules of its lanes are checked.
  std::vector<RuleVerdict> verify_all(const std::vector<rules::Rule>& rules,
                                      Reporter& rep = null_reporter(),
                                      const LaneShare& share = {}) const;

  // Drops the kept sessions of reuse_context: the next rules of every lane start from a fresh
  // solver (the generator does so at the start of each proof epoch, so that a resumed run
  // checks the rules after a kept epoch from the same solver state as the run it resumes).
  void reset_sessions() const;

  const rules::RuleSet& axioms() const { return axioms_; }
  const VerifyOptions& options() const { return opts_; }

 private:
  // `session`: the kept session of a lane of rules (created when empty, dropped when a check
  // leaves it unusable), or null for a fresh one.
  RuleVerdict verify_in(const rules::Rule& r, std::unique_ptr<Z3Session>* session) const;
  RuleVerdict numeric_test(const rules::Rule& r, uint64_t per_params) const;
  RuleVerdict prove(const rules::Rule& r, std::unique_ptr<Z3Session>* session) const;
  // The exhaustive bounded test after the solver left `v` open; turns `v` into a
  // Counterexample when it finds one.
  void refute(const rules::Rule& r, RuleVerdict& v) const;

  rules::RuleSet axioms_;
  VerifyOptions opts_;
  std::shared_ptr<LazyWatchdog> watchdog_;  // keeps the time limit (solver_watchdog.h)
  std::shared_ptr<SessionLanes> lanes_;     // the sessions of reuse_context
};

}  // namespace graphsub::verify
