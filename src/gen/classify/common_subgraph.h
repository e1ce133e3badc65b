#pragma once
// The two common-subgraph forms of design.md section 4. A rule is redundant when
//  (a) its sides share a subgraph that reads the same inputs (a subterm on both sides): the
//      rule with that subterm replaced by a fresh variable is more general; or
//  (b) a common subgraph covers all outputs: every output pair has the same operator on top,
//      with equal arguments except some: the equalities of the differing arguments are more
//      general (the original follows from them by applying the common operators).
// These functions build the more general rules; whether they hold is for the caller to check.
// The proving stage tries each form on its own (input_generalizations, output_generalization);
// the classification of large candidates applies both repeatedly (reduce_common_subgraphs),
// built from the same two steps.
#include <optional>
#include <vector>

#include "gen/classify/equality.h"

namespace graphsub::gen {

// The maximal subterms that occur on both sides and contain a variable, sorted by text. With
// `skip_outputs`, subterms that are a whole output of either side are left out first (and
// the largest common subterms inside them count as maximal).
std::vector<rules::TermPtr> maximal_common_subterms(const Equality& e, bool skip_outputs = false);

// `e` with every occurrence of each of `subterms` replaced by a fresh variable of its own
// (a name no variable of `e` starts with), and output pairs whose sides are the same term
// dropped.
Equality abstract_subterms(const Equality& e, const std::vector<rules::TermPtr>& subterms);

// One generalization per maximal common subterm (form a), in the order of
// maximal_common_subterms; those that leave no output pair are left out.
std::vector<Equality> input_generalizations(const Equality& e);

// The equalities of the differing arguments under common top operators, when every output pair
// has one; output pairs that are identical are dropped. Nullopt when not of that form.
std::optional<Equality> output_generalization(const Equality& e);

// The most general form by both reductions, repeated until neither applies:
//  - every maximal common subterm that is not a whole output becomes a fresh variable, all at
//    once (abstracting a whole output T of f(T) = T would claim f(g) = g, false for
//    relu(relu(T)) = relu(T));
//  - output pairs under common top operators that differ in one argument each become the pairs
//    of those arguments (two differing arguments may be equal only jointly).
// Identical and repeated output pairs are dropped. A step is not taken when it would leave an
// output pair with a bare variable that the other side does not read (never true:
// (ewadd ?a ?b) = (ewadd ?b ?a) stays rather than becoming ?a = ?b). Nullopt when nothing
// remains (every output pair reduces to identical terms). An equality no step applies to
// comes back as it was (the same terms). The reduced form is more general, so it may be false
// where `e` holds (relu(relu(T)) = relu(T) peels to relu(T) = T).
std::optional<Equality> reduce_common_subgraphs(const Equality& e);

// Keeps the conditions whose variables all occur in `e` (the conditions of a specific
// candidate that still mean something after reduce_common_subgraphs).
std::vector<rules::TermPtr> conditions_within(const Equality& e,
                                              const std::vector<rules::TermPtr>& conditions);

}  // namespace graphsub::gen
