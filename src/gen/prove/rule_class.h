#pragma once
// The classes the prover works on: candidates equal up to renaming, each with its verdict and
// a link to its most general form within its skeleton (the class it is a renaming instance
// of, with the most variables), so that a proof of the general form settles the instance.
#include <cstdint>
#include <string>
#include <vector>

#include "gen/classify/classify.h"
#include "gen/classify/equality.h"
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
  std::string reason;
  // When Failed: the class whose own proof failed (itself, or the more general form that made
  // trying this one pointless) and that proof's reason.
  std::string failed_key, failed_reason;
  // Holds for every instance, so its renaming instances hold too.
  bool holds_always() const { return (state == Proved || state == Implied) && !conditional; }
};

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
// `key`, `reason`: the form whose proof failed and why.
void skip_for(RuleClass& c, const std::string& key, const std::string& reason);

// True when a failure of the more general class `g` settles the class `c`. Not when `c` has
// shape conditions to be retried under that `g` lacks (it may hold under them), nor when
// `g` got no verdict from the prover (not expressible as a rule).
bool failure_carries_over(const RuleClass& c, const RuleClass& g);

}  // namespace graphsub::gen
