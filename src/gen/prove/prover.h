#pragma once
// The prover as the generator sees it: a function from a batch of rules to verdicts. Every
// proof the generator asks for (classes, lifted rules, common-subgraph generalizations) goes
// through prove_all, which states each equality as a rule in a direction the rule language
// can express and keeps the per-verdict times of the time report.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gen/classify/equality.h"
#include "rules/rule.h"

namespace graphsub::gen {

// The verdict on one rule.
struct ProofOutcome {
  bool proved = false;
  std::string reason;    // why not: counterexample, solver unknown, timeout, numeric mismatch
  bool refuted = false;  // shown false (a counterexample), not merely unproved
  // For the time report only (never written to the library): the verdict's kind and the
  // prover's time on it.
  std::string kind;
  double numeric_ms = 0, solver_ms = 0;
  uint64_t resources = 0;  // the solver's resource count (rlimit units), when counted
  // Worth proving again under extra conditions: refuted or left open by the prover, not
  // rejected for having no instance or for its form.
  bool retry_under_conditions() const { return refuted || kind == "unknown" || kind == "timeout"; }
};

// Prover time by verdict kind (proved, unknown, counterexample, ...).
struct ProverTimes {
  uint64_t calls = 0;
  double numeric_ms = 0, solver_ms = 0;  // totals
  double median_ms = 0, max_ms = 0;      // of numeric + solver per call
  uint64_t max_resources = 0;            // of the solver per call, when counted
};
// Proves a batch of rules (in parallel as it likes); one outcome per rule, in order.
using Prover = std::function<std::vector<ProofOutcome>(const std::vector<rules::Rule>&)>;

// The rule of an equality in one direction (lhs -> rhs, or reversed), with its tensor
// variables in order of first occurrence and its conditions as (where ...).
rules::Rule to_rule(const Equality& e, const std::string& name, bool reversed);

// True when lhs -> rhs can drive a rewrite: every source output applies an operator and the
// target uses only variables the source binds (the rule language requires both).
bool usable_direction(const std::vector<rules::TermPtr>& src,
                      const std::vector<rules::TermPtr>& dst);

// Distinct tensor variables of both sides.
int num_vars(const Equality& e);

// The kind of outcome of an equality that was not sent to the prover: no direction of it is
// a rule.
inline constexpr const char* kNotExpressible = "not expressible";
// Nor of one with more tensor variables than GeneratorOptions::max_prover_vars.
inline constexpr const char* kTooManyVars = "too many variables";

// Per-call times of the prover, by verdict kind (for the time report).
struct CallTimes {
  std::map<std::string, std::vector<double>> ms;
  std::map<std::string, ProverTimes> totals;
  void add(const ProofOutcome& o);
  std::map<std::string, ProverTimes> summary();
};

// Proves the equalities `eqs` with the prover, each as a rule in a direction the rule
// language can state; one outcome each. An equality with no such direction (a variable on
// both sides' outputs) is not proved, nor one with more than `max_vars` tensor variables
// (0: no limit). `calls` counts the rules sent.
std::vector<ProofOutcome> prove_all(const Prover& prove, const std::vector<const Equality*>& eqs,
                                    int max_vars, uint64_t& calls, CallTimes& times);

}  // namespace graphsub::gen
