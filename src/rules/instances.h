#pragma once
// Enumeration of the well-typed instances of a rule or axiom for bounded testing: every
// assignment of its parameter variables from their domains, and every assignment of shapes
// from a ShapeSpace to its tensor variables under which every source and target term
// type-checks (and the conditions hold).
//
// Shapes are found bottom-up: the well-typed (shapes, type) pairs of each subterm are joined
// on shared variables and filtered by the operator's shape inference, so the work follows the
// number of well-typed combinations rather than the product of all shapes.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor_type.h"
#include "ops/op_def.h"
#include "rules/rule.h"

namespace graphsub::rules {

using ParamAssignment = std::map<std::string, AxiomParam>;

struct Instance {
  ParamAssignment params;
  std::map<std::string, TensorType> tensors;  // type of each tensor variable
};

// The most parameter assignments a rule may have before its conditions filter them (the
// product of its parameters' domain sizes). Shipped rules and axioms have a few dozen at most;
// a rule file with dozens of parameter variables would otherwise ask for more than memory
// holds.
inline constexpr uint64_t kMaxParamAssignments = 100'000;

// Every assignment of the rule's parameter variables, in domain order, that satisfies the
// conditions not involving shapes. `domains` supplies the declared domains. Throws Error when
// a parameter's domain is not declared or when there are more than kMaxParamAssignments.
std::vector<ParamAssignment> param_assignments(const Rule& r, const RuleSet& domains);

using Candidates = std::map<std::string, std::vector<TensorType>>;

// The candidate types of each tensor variable: every rank of the space with every dimension
// in `dims`, except that a variable used only as (part of) a convolution kernel takes
// `kernel_dims` for its two spatial dimensions. With `with_splits`, the shapes take their
// dimensions from `split_dims` instead, each once without a split point and once with a cut
// at 1 on each axis.
Candidates candidate_types(const Rule& r, const ShapeSpace& space, bool with_splits = false);

// The search keeps the well-typed partial instances of every subterm; with many tensor
// variables over a large shape space they can run into the billions. Past this many (in all,
// per enumeration) it stops with InstanceSearchTooLarge instead of exhausting memory.
inline constexpr size_t kMaxPartialInstances = 2'000'000;

// The most tensor variables a rule may have for instance search (one bit each in its masks).
inline constexpr size_t kMaxTensorVars = 64;
// Throws Error naming the rule and the limit when it has more tensor variables.
void require_searchable(const Rule& r);

class InstanceSearchTooLarge : public Error {
 public:
  using Error::Error;
};

// Calls `visit` for each well-typed instance with parameters `params`, in a deterministic
// order, until it returns false. Returns false when stopped early. Throws
// InstanceSearchTooLarge past `max_partials` partial instances.
bool for_each_instance(const Rule& r, const ParamAssignment& params, const Candidates& candidates,
                       const std::function<bool(const Instance&)>& visit,
                       size_t max_partials = kMaxPartialInstances);

// At most `k` of the instances for_each_instance visits, spread evenly over the first `limit`
// of them (the first and the last included), in visiting order.
std::vector<Instance> spread_instances(const Rule& r, const ParamAssignment& params,
                                       const Candidates& candidates, size_t k,
                                       size_t limit = 100000,
                                       size_t max_partials = kMaxPartialInstances);

// Up to `k` distinct well-typed instances with parameters `params`, for testing a rule on a
// few of them: each is the first instance of a depth-first search over the tensor variables
// that tries their candidate shapes in an order drawn from `seed` (src/rules/
// instance_sampler.cpp), so they spread over ranks and sizes without enumerating every
// instance. A search that has found nothing after a few thousand bindings (a rule that
// type-checks rarely or never in the space) hands over to spread_instances, whose bottom-up
// search settles that quickly. The same arguments give the same instances. Empty when no
// instance type-checks. Throws InstanceSearchTooLarge past `max_partials` partial instances.
std::vector<Instance> sample_instances(const Rule& r, const ParamAssignment& params,
                                       const Candidates& candidates, size_t k, uint64_t seed,
                                       size_t max_partials = kMaxPartialInstances);

// A readable instance: "?a=1 ?x:f32[2,3] ?y:f32[2,1]{split0:1}".
std::string instance_str(const Instance& in);

}  // namespace graphsub::rules
