#pragma once
// Plain host tensors for the executors: logical shape plus row-major values.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace graphsub {

template <class T>
struct HostTensor {
  Shape shape;
  std::vector<T> data;
};

template <class T>
using TensorMap = std::map<std::string, HostTensor<T>>;

// Random values for every graph input (and, with include_weights, every weight), seeded and
// keyed by name so that two graphs with the same input names get the same feeds.
TensorMap<float> random_feeds(const Graph& g, uint64_t seed, bool include_weights = false);
TensorMap<uint32_t> random_feeds_u32(const Graph& g, uint64_t seed, bool include_weights = true);

// The one tolerance of graphsub's numerical comparisons (the equivalence check of
// src/check, the rule checker's float run, the tests): a value `got` agrees with the
// reference value `ref` of the same tensor element when
//     |got - ref| <= atol * max(1, M) + rtol * |ref|,
// M being the largest finite |value| of the reference tensor: the absolute part scales with
// the tensor's magnitude, so that deep networks with large activations are judged by their
// significant digits, and never falls below atol for tensors of small values. Non-finite
// values agree only with the same value (NaN with NaN, +inf with +inf). The command line's
// --rtol and --atol are these two numbers in every mode.
struct Tolerance {
  double rtol = 1e-4;
  double atol = 1e-5;
};

// The type a model's floating-point values are stored in when it is written: a float16 or
// bfloat16 model is computed as float32 and written back in its type, each weight rounded.
enum class StoredPrecision { Float32, Float16, BFloat16 };

// `t` widened to what values stored at `p` keep (Float32: `t`; Float16: at least rtol 1e-2
// and atol 1e-3; BFloat16: 5e-2 and 1e-2: a few units in the last place of each rounded
// weight).
Tolerance tolerance_for(StoredPrecision p, Tolerance t);

struct Difference {
  double max_abs = 0;
  double max_rel = 0;     // |a-b| / max(|a|,|b|) over finite pairs where that is defined
  double max_ref = 0;     // M above: the largest finite |value| of the reference
  int64_t nonfinite = 0;  // NaN or infinite values of the reference
  bool ok = true;         // every element agrees (see Tolerance)
};
// Element-wise comparison of `got` with the reference `ref`; a shape mismatch is reported as
// not ok with infinite differences.
Difference compare(const HostTensor<float>& got, const HostTensor<float>& ref, Tolerance tol);

}  // namespace graphsub
