#pragma once
// Verdicts on rules by canonical key, and the common-subgraph bookkeeping of design.md
// section 4: which valid rules are covered by a valid more general one. The proving stages
// ask it first whether a rule needs a proof at all (a valid generalization implies it), so
// that pruning happens before proving, and it proves the generalizations themselves, smallest
// first.
//
// On several ranks every rank keeps the same book. A verdict one rank reaches alone (on a
// class it owns) is held back (`defer_mark`) and applied on every rank at the next exchange,
// in rank order; a verdict on a batch every rank proved together is applied at once
// (`mark_key`). One process defers alike, so the book, and the library, do not depend on the
// number of ranks.
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "gen/classify/equality.h"
#include "gen/cluster.h"
#include "gen/prove/prover.h"
#include "gen/prove/rule_key.h"

namespace graphsub::gen {

class Pruner {
 public:
  // `calls`: the generator's count of rules sent to the prover (shared with its other stages).
  // `checks_here`: which rules of a batch this rank's verifier lanes check.
  Pruner(
      const Prover& prove, int max_vars, uint64_t& calls, Cluster& cluster = single_process(),
      ChecksHere checks_here = [](size_t) { return true; })
      : prove_(prove),
        max_vars_(max_vars),
        calls_(calls),
        cluster_(cluster),
        checks_here_(std::move(checks_here)) {}

  Cluster& cluster() { return cluster_; }
  int max_vars() const { return max_vars_; }
  // Collective: every rank passes the same items (in the same order).
  std::vector<ProofOutcome> prove(const std::vector<BatchItem>& items);
  // Equalities every rank holds (generalizations): proved together.
  std::vector<ProofOutcome> prove(const std::vector<const Equality*>& eqs);
  uint64_t too_many_vars() const { return too_many_vars_; }
  std::map<std::string, ProverTimes> times() { return times_.summary(); }

  // A verdict every rank records at the same point; `redundant` when a more general valid
  // rule covers it.
  void mark_key(const std::string& key, bool valid, bool redundant);
  // A verdict this rank reached on its own: recorded by every rank at the next exchange.
  void defer_mark(const std::string& key, bool valid, bool redundant);
  // Collective: every rank's held-back verdicts, recorded; `open`: the undecided
  // generalizations of this rank's rules to resolve, returned as the union of every rank's.
  std::set<std::string> exchange(const std::set<std::string>& open = {});

  // Drops the memo of generalizations and the equalities of those not decided: the steps of a
  // pass need them, later passes compute again the few they ask for (at N = 4 they were
  // hundreds of MiB, mostly of classes pruned without a proof).
  void forget_generalizations() {
    gens_ = {};
    pending_ = {};
  }
  // Canonical generalizations of `e`, by key (memoized).
  const std::vector<RuleKey>& generalizations(const Equality& e);
  bool has_valid_generalization(const Equality& e);
  // The keys of the generalizations of `eqs` not decided yet.
  std::set<std::string> undecided_generalizations(const std::vector<const Equality*>& eqs);
  // Collective: decides every undecided generalization in `open` (the same set on every rank),
  // proving them smallest first: a generalization covered by a valid one of its own is valid
  // without a proof.
  void resolve_generalizations(const std::set<std::string>& open);
  // Valid rules covered by nothing more general, sorted by key (the same on every rank).
  std::vector<Equality> irredundant() const;
  // Valid generalizations kept that are no class of their own, among the rules this rank owns
  // (summed over the ranks by the caller).
  uint64_t generalizations_kept() const;
  void note_class(const std::string& key) { book_[rule_key(key)].is_class = true; }
  // Calls made to decide generalizations (the rest are for classes and lifted rules).
  uint64_t generalization_calls() const { return generalization_calls_; }

 private:
  // What is known of one rule: kept by key hash (rule_key), its text only where the library
  // or a pending decision needs it.
  struct Entry {
    int8_t verdict = -1;  // -1 not decided, 0 not valid, 1 valid
    bool redundant = false;
    bool is_class = false;  // a class of this rank
  };
  struct HeldMark {
    std::string key;
    bool valid, redundant;
  };
  bool decided(const RuleKey& k) const;
  const Equality& pending(const std::string& key);
  // Decides the undecided generalizations `keys`: valid without a proof when a valid one of
  // their own covers them (then redundant), else proved in one batch.
  void decide(const std::vector<std::string>& keys);

  const Prover& prove_;
  int max_vars_;
  uint64_t& calls_;
  Cluster& cluster_;
  ChecksHere checks_here_;
  uint64_t too_many_vars_ = 0;
  CallTimes times_;
  std::unordered_map<RuleKey, Entry, RuleKeyHash> book_;
  // The equalities of undecided generalizations (until decided), and the keys of valid rules
  // (the library's candidates).
  std::unordered_map<RuleKey, Equality, RuleKeyHash> pending_;
  std::unordered_map<RuleKey, std::string, RuleKeyHash> valid_;
  std::unordered_map<RuleKey, std::vector<RuleKey>, RuleKeyHash> gens_;
  std::vector<HeldMark> held_;
  uint64_t generalization_calls_ = 0;
};

}  // namespace graphsub::gen
