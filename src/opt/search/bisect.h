#pragma once
// The bisection to the first bad rewrite, shared by every mode: when an optimized graph fails
// the equivalence check, the search's applications are replayed and the graph after each
// prefix is checked against the original (a binary search: the check is the expensive part).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "check/equivalence.h"
#include "opt/search/search.h"

namespace graphsub::opt {

// The index in `steps` of the first application after which the graph no longer passes the
// check; nullopt when every prefix passes (what broke the outputs came after the search:
// pre-computing the weights). Throws Error when the steps do not replay.
std::optional<size_t> first_bad_application(const Graph& original,
                                            const std::vector<const Transform*>& transforms,
                                            const std::vector<Step>& steps,
                                            const CheckOptions& check,
                                            Reporter& rep = null_reporter());

// "RULE at WHERE" of steps[i].
std::string describe_step(const Step& s);

}  // namespace graphsub::opt
