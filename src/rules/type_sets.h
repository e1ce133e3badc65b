#pragma once
// A quick proof that a rule has no well-typed instance, before any instance search.
//
// Each subterm's set of possible result types is computed bottom-up from its variables'
// candidate types, ignoring which variables the arguments share: a superset of the types its
// well-typed instances have. When some side's set is empty the rule has no instance at all.
// Rules that never type-check (an attention over a convolution's 4-d output) would otherwise
// exhaust the instance search over every binding of their variables; the sets collapse the
// bindings to distinct types, so the answer costs little.
//
// The answer is a function of the rule, the parameters and the candidates alone (sets too
// large to compute are "unknown" by a fixed bound, never by what was computed before), so a
// rule skipped here is skipped on any thread, rank or run. Each thread keeps the sets of the
// subterms it met, keyed by their text with the parameters and the variables' candidate lists
// in place of names.
#include "rules/instances.h"

namespace graphsub::rules {

// False when no assignment of `candidates` to the tensor variables type-checks some source or
// target term of `r` under `params`: the rule has no instance. True when one may.
bool may_type_check(const Rule& r, const ParamAssignment& params, const Candidates& candidates);

}  // namespace graphsub::rules
