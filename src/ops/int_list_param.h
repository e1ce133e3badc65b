#pragma once
// Integer lists as one parameter of the axiom language: the values joined by '_' (expand's
// target 2_4, gather's indices 1_0); a list of one value is an integer term (indices 0).
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ops/op_def.h"

namespace graphsub {

// The values a parameter spells; throws Error naming the operator when it spells none.
std::vector<int64_t> param_ints(std::string_view op, const AxiomParam& p);

// The parameter spelling `v`; nullopt for an empty list (no term spells it).
std::optional<AxiomParam> ints_param(std::span<const int64_t> v);

}  // namespace graphsub
