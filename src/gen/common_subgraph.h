#pragma once
// The two common-subgraph forms of design.md section 4. A rule is redundant when
//  (a) its sides share a subgraph that reads the same inputs (a subterm on both sides): the
//      rule with that subterm replaced by a fresh variable is more general; or
//  (b) a common subgraph covers all outputs: every output pair has the same operator on top,
//      with equal arguments except some: the equalities of the differing arguments are more
//      general (the original follows from them by applying the common operators).
// These functions build the more general rules; whether they hold is for the caller to check.
#include <optional>
#include <vector>

#include "gen/equality.h"

namespace graphsub::gen {

// One generalization per maximal subterm that occurs on both sides and contains a variable.
std::vector<Equality> input_generalizations(const Equality& e);

// The equalities of the differing arguments under common top operators, when every output pair
// has one; output pairs that are identical are dropped. Nullopt when not of that form.
std::optional<Equality> output_generalization(const Equality& e);

}  // namespace graphsub::gen
