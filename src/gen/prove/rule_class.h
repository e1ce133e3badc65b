#pragma once
// The classes the prover works on: candidates equal up to renaming, each with its verdict and
// a link to its most general form within its skeleton (the class it is a renaming instance
// of, with the most variables), so that a proof of the general form settles the instance.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gen/classify/classify.h"
#include "gen/classify/equality.h"
#include "gen/cluster.h"
#include "gen/prove/rule_key.h"
#include "ir/report.h"
#include "rules/term.h"

namespace graphsub::gen {

struct RuleClass {
  Equality eq;
  uint64_t pairs = 0;    // candidates in the class
  uint64_t reduced = 0;  // of which larger candidates reduced into it
  int vars = 0;          // distinct variables
  int general = -1;      // index of a more general class (same skeleton), -1 if none
  enum State { Pending, Proved, Implied, Failed } state = Pending;
  bool by_lift = false;                     // implied by a proven rule with a parameter variable
  std::vector<rules::TermPtr> shape_conds;  // shape conditions that held in all its candidates
  bool conditional = false;                 // proved only under `shape_conds` (not as stated)
  std::string reason;  // when Failed by a verdict of its own: why (empty when not tried)
  // When Failed by a prover verdict: the class whose own proof failed (itself, or the more
  // general form that made trying this one pointless; `not_tried` then), by key. Its reason
  // is found at the report (on several ranks the form may be another rank's class).
  bool has_root = false, not_tried = false;
  RuleKey failed_root;
  // Holds for every instance, so its renaming instances hold too.
  bool holds_always() const { return (state == Proved || state == Implied) && !conditional; }
};

// What the proving passes know of a failed class on any rank: the root of its failure and
// whether it had shape conditions (failure_carries_over). The same on every rank, updated at
// the exchanges between passes.
struct FailInfo {
  RuleKey root;
  bool has_conds = false;
};
using FailBook = std::unordered_map<RuleKey, FailInfo, RuleKeyHash>;
struct FailEntry {
  RuleKey key;  // the failed class
  FailInfo info;
};

// Collective: every rank's new entries (`mine`, emptied) added to `book`.
void exchange_failures(Cluster& cluster, std::vector<FailEntry>& mine, FailBook& book);

// The classes of `cl`, their terms rebuilt from their keys (in parallel; each of cl's map
// nodes is freed as it is taken, so keys and terms are not all held twice).
std::vector<RuleClass> rule_classes(Classified& cl, int threads, Reporter& rep);

// Sets each class's `general`: within a skeleton, a class that is a renaming instance of one
// with more variables depends on it (the one with the most).
void link_most_general_forms(std::vector<RuleClass>& classes, Reporter& rep);

// True when a more general form of `c` (up its chain of `general` links) holds always.
bool general_form_holds(const std::vector<RuleClass>& classes, const RuleClass& c);

// Marks `c` failed without a call because a more general form of it (a class that passed the
// float re-test) was not proved: `c` follows from that form where it holds, and fails for the
// same reason almost always (TASO prunes before it verifies).
// `root`: the form whose proof failed.
void skip_for(RuleClass& c, const RuleKey& root);

// True when a failure of the more general class `g` settles the class `c`. Not when `c` has
// shape conditions to be retried under that `g` lacks (it may hold under them), nor when
// `g` got no verdict from the prover (not expressible as a rule).
bool failure_carries_over(const RuleClass& c, const RuleClass& g);
// The same for a class known by its entry in the book (absent: no failure that carries).
bool failure_carries_over(const RuleClass& c, const FailInfo* g);

}  // namespace graphsub::gen
