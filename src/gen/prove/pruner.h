#pragma once
// Verdicts on rules by canonical key, and the common-subgraph bookkeeping of design.md
// section 4: which valid rules are covered by a valid more general one. The proving stages
// ask it first whether a rule needs a proof at all (a valid generalization implies it), so
// that pruning happens before proving, and it proves the generalizations themselves, smallest
// first.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gen/classify/equality.h"
#include "gen/prove/prover.h"

namespace graphsub::gen {

class Pruner {
 public:
  // `calls`: the generator's count of rules sent to the prover (shared with its other stages).
  Pruner(const Prover& prove, int max_vars, uint64_t& calls)
      : prove_(prove), max_vars_(max_vars), calls_(calls) {}

  std::vector<ProofOutcome> prove(const std::vector<const Equality*>& eqs);
  uint64_t too_many_vars() const { return too_many_vars_; }
  std::map<std::string, ProverTimes> times() { return times_.summary(); }
  // Records a verdict; `redundant` when a more general valid rule covers it.
  void mark(const Equality& e, bool valid, bool redundant);
  // Canonical generalizations of `e` (memoized).
  const std::vector<std::string>& generalizations(const Equality& e);
  bool has_valid_generalization(const Equality& e);
  // Decides every generalization of `eqs` not decided yet (proving them, smallest first: a
  // generalization covered by a valid one of its own is valid without a proof).
  void resolve_generalizations(const std::vector<const Equality*>& eqs);
  // Valid rules covered by nothing more general, sorted by key.
  std::vector<Equality> irredundant() const;
  // Valid generalizations kept that are no class of their own.
  uint64_t generalizations_kept() const;
  void note_class(const std::string& key) { classes_.insert(key); }
  // Calls made to decide generalizations (the rest are for classes and lifted rules).
  uint64_t generalization_calls() const { return generalization_calls_; }

 private:
  void resolve_generalizations_keys(const std::set<std::string>& keys);
  // Decides the undecided generalizations `keys`: valid without a proof when a valid one of
  // their own covers them (then redundant), else proved in one batch.
  void decide(const std::vector<std::string>& keys);

  const Prover& prove_;
  int max_vars_;
  uint64_t& calls_;
  uint64_t too_many_vars_ = 0;
  CallTimes times_;
  std::map<std::string, bool> verdict_;
  std::map<std::string, Equality> eqs_;
  std::map<std::string, std::vector<std::string>> gens_;
  std::set<std::string> redundant_, classes_;
  uint64_t generalizations_proved_ = 0;
  uint64_t generalization_calls_ = 0;
};

}  // namespace graphsub::gen
