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

// One rule of a batch, as every rank sees it: its canonical key and how it goes to the prover
// (decided where its equality is held). `eq`: the equality where this rank holds it; otherwise
// it is rebuilt from the key, and only when one of this rank's verifier lanes checks it.
struct BatchItem {
  enum Status : uint8_t { Forward, Reversed, NotExpressible, TooManyVars };
  std::string key;
  uint8_t status = Forward;
  int vars = 0;  // tensor variables (for the reason of TooManyVars)
  const Equality* eq = nullptr;
};

// How `e` goes to the prover: in a direction the rule language can state, or not at all (no
// such direction, or more than `max_vars` tensor variables; 0: no limit).
BatchItem batch_item(const Equality& e, int max_vars);

// Which rules of a batch (by their position among the rules sent) this rank checks; the
// prover fills in the others from their ranks.
using ChecksHere = std::function<bool(size_t)>;

// Proves the items with the prover, each as a rule in its item's direction; one outcome each.
// Items not sent (NotExpressible, TooManyVars) get that outcome. `calls` counts the rules sent.
std::vector<ProofOutcome> prove_all(const Prover& prove, const std::vector<BatchItem>& items,
                                    int max_vars, uint64_t& calls, CallTimes& times,
                                    const ChecksHere& checks_here);

}  // namespace graphsub::gen
