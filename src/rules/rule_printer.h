#pragma once
// Canonical text of the rule language. parse_rules(print(x)) gives back x (tested).
#include <string>

#include "rules/rule.h"

namespace graphsub::rules {

// (rule NAME "doc" (tensors ...) (params ...) (where ...) (source ...) (target ...)), one
// clause per line; an equality (Rule::both_ways) as (equality NAME ... (lhs ...) (rhs ...)).
// With `as_axiom` the single output pair prints as (= lhs rhs).
std::string rule_str(const Rule& r, bool as_axiom = false);
std::string domain_str(const ParamDomain& d);
std::string shapes_str(const ShapeSpace& s);
// Domains, shape space, axioms, then rules, separated by blank lines.
std::string ruleset_str(const RuleSet& s);

}  // namespace graphsub::rules
