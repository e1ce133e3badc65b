#pragma once
// The optimizer's own result check: both graphs run on the same random inputs with the
// reference executor, and every output must agree element-wise within
// |a - b| <= atol + rtol * |b|, where atol = 1e-5 * max |b| of that output (scale-aware, so
// that deep stacks with small activations are still compared meaningfully).
#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace graphsub::opt {

struct CheckResult {
  bool ok = true;
  double max_abs_diff = 0;
  double max_rel_diff = 0;
  std::string detail;  // the first failing output, or "" when ok
};

// Weights with data keep their values; weights without data get random values by name
// (the same in both graphs). Throws Error when the graphs' inputs or outputs differ.
CheckResult check_equivalent(const Graph& original, const Graph& optimized, uint64_t seed,
                             double rtol = 1e-4);

}  // namespace graphsub::opt
