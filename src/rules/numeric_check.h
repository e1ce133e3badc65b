#pragma once
// Numerical testing of one instance of a rule or axiom: both sides are instantiated in one
// graph (src/rules/instantiate.h), run with the reference kernels on random inputs, and
// compared output by output: types must be compatible (equal shapes, and no split point
// recorded differently by the two sides; one side may record fewer), float values
// within a tolerance, and wrap-around uint32 values exactly. Where a non-linear stand-in
// (relu, sigmoid, tanh; see src/ops/scalar.h) is involved, the uint32 polynomials agree only
// when the two sides are equal by construction, so a uint32 difference is then not a failure
// (the instance counts as checked in float only).
#include <cstdint>
#include <string>

#include "exec/host_tensor.h"
#include "rules/instances.h"

namespace graphsub::rules {

struct NumericOptions {
  // The float run's tolerance (exec/host_tensor.h), looser in atol than a result check's:
  // rule instances are small graphs of random values, not a network's outputs.
  Tolerance tolerance{.rtol = 1e-4, .atol = 1e-4};
};

struct InstanceCheck {
  bool ok = true;
  bool exact_checked = false;  // uint32 values were compared and agreed exactly
  int output = -1;             // the first differing output, when !ok
  std::string failure;         // what differs, e.g. "max |diff| 0.83 (float)"
};

InstanceCheck check_instance(const Rule& r, const Instance& in, uint64_t seed,
                             const NumericOptions& opts = {});

// Equal shapes, and every split point recorded by both types is the same.
bool types_compatible(const TensorType& a, const TensorType& b);

// True when an instance with these parameters runs a non-linear activation, directly or
// fused into conv/matmul.
bool uses_standin(const Rule& r, const ParamAssignment& params);

}  // namespace graphsub::rules
