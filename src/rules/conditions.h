#pragma once
// Evaluation of a rule's (where ...) conditions for concrete parameter values and, when the
// conditions mention (dim ?t AXIS), concrete tensor types. The optimizer checks them before
// applying a rule; bounded testing checks only instances where they hold.
#include <map>
#include <string>

#include "core/tensor_type.h"
#include "ops/op_def.h"
#include "rules/rule.h"

namespace graphsub::rules {

// True when every condition holds. A (dim ?t a) whose tensor is unknown or has no axis a makes
// the condition false. Throws Error when an unbound parameter is referenced or an ordering
// comparison involves a symbol.
bool conditions_hold(const std::vector<TermPtr>& conditions,
                     const std::map<std::string, AxiomParam>& params,
                     const std::map<std::string, TensorType>& tensors);

// True when some condition mentions (dim ...), i.e. depends on tensor shapes.
bool conditions_use_shapes(const std::vector<TermPtr>& conditions);

}  // namespace graphsub::rules
