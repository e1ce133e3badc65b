#pragma once
// Terms of the rule language rewritten by axioms read in one direction: a match of one side
// anywhere in a term is replaced by the other side under the match's bindings. The unfolding of
// fused operators (unfold.h) is built on it; the optimizer rewrites graphs, not terms
// (opt/match), and the generator enumerates them (gen/enumerate).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rules/rule.h"

namespace graphsub::gen {

// An axiom used in one direction, without conditions: a rewrite of a term claims the equality
// wherever both sides type-check, as the axiom does.
struct TermRewrite {
  std::string name;  // the axiom's name, with rules::kReverseSuffix for right to left
  rules::TermPtr from, to;
};

// The axiom `name` of `axioms` left to right, or right to left for NAME~rev. Throws Error for
// an unknown name, an axiom with conditions, or a direction whose right side uses a variable
// its left side does not bind.
TermRewrite term_rewrite(const rules::RuleSet& axioms, const std::string& name);

using Bindings = std::map<std::string, rules::TermPtr>;

// Bindings of the variables of `pattern` that make it `t` (a variable met twice binds equal
// subterms); nullopt where there are none.
std::optional<Bindings> match_term(const rules::TermPtr& pattern, const rules::TermPtr& t);

// `t` with each variable that `b` binds replaced.
rules::TermPtr substitute(const rules::TermPtr& t, const Bindings& b);

// Every term that one application of `r` at one position of `t` gives, positions in pre-order.
std::vector<rules::TermPtr> rewrites_once(const rules::TermPtr& t, const TermRewrite& r);

// The rewrites of `t` by those of `rewrites` that match at its first position (pre-order) where any
// does, one each. Where several match there (an operator defined twice, as masked attention is with
// a broadcast mask and with one of the scores' shape), each is an alternative; a rule matching
// further on waits its turn, so that independent ones (a head split moved on each of q, k and
// v) give one rewrite sequence, not one per order. Empty where none matches.
std::vector<rules::TermPtr> rewrites_at_first_match(const rules::TermPtr& t,
                                                    const std::vector<TermRewrite>& rewrites);

}  // namespace graphsub::gen
