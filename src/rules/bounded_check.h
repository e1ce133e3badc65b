#pragma once
// Bounded testing of axioms and rules: every well-typed instance in a shape space (or the
// first few), evaluated numerically (src/rules/numeric_check.h). `graphsub check-axioms` runs
// check_axioms over specs/operators.axioms; the verifier runs bounded_test on each rule
// before it calls the solver.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/report.h"
#include "rules/instances.h"
#include "rules/numeric_check.h"

namespace graphsub::rules {

struct BoundedResult {
  std::string name;
  uint64_t instances = 0;   // well-typed instances evaluated
  uint64_t exact = 0;       // of which also compared exactly in uint32
  uint64_t param_sets = 0;  // parameter assignments tried
  bool holds = true;
  int output = -1;             // the differing output, when !holds
  std::string counterexample;  // "?a=0 ?x:[1,1] ...: output 0: types differ: ..."
  double seconds = 0;
};

struct BoundedOptions {
  // Instances per parameter assignment and pass, a seeded random sample of the well-typed
  // ones (sample_instances). 0: all of them.
  uint64_t max_per_params = 0;
  // With max_per_params 0: at most this many instances in all (0: no bound), shared out over
  // the parameter assignments and passes in order (each takes an even share of what is left,
  // so one with few instances leaves the rest to the later ones), each its first instances.
  uint64_t max_instances = 0;
  uint64_t seed = 1;
  NumericOptions numeric;
  // Bound of the instance search (see instances.h): past it the test throws
  // InstanceSearchTooLarge.
  size_t max_partial_instances = kMaxPartialInstances;
};

// Tests one rule or axiom on one thread.
BoundedResult bounded_test(const Rule& r, const RuleSet& domains, const ShapeSpace& space,
                           const BoundedOptions& opts = {});

// Tests one rule on the instances whose tensor variables each take one of `types` (no split
// points): a few given shapes, where the rule is known to type-check, instead of a space.
BoundedResult bounded_test_types(const Rule& r, const RuleSet& domains,
                                 const std::vector<TensorType>& types,
                                 const BoundedOptions& opts = {});

struct AxiomCheckOptions {
  int threads = 0;  // 0: every hardware thread
  BoundedOptions bounded;
};

struct AxiomCheckReport {
  std::vector<BoundedResult> axioms;  // in file order
  uint64_t instances = 0;
  uint64_t exact = 0;
  double seconds = 0;
  bool all_hold() const;
};

// Tests every axiom of `axioms` (which also declares the domains) on every instance of
// `space`, in parallel over (axiom, parameter assignment) work items. The report is the same
// whatever the number of threads.
AxiomCheckReport check_axioms(const RuleSet& axioms, const ShapeSpace& space,
                              const AxiomCheckOptions& opts = {}, Reporter& rep = null_reporter());

}  // namespace graphsub::rules
