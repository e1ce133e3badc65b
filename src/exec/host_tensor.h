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

struct Difference {
  double max_abs = 0;
  double max_rel = 0;  // |a-b| / max(|a|,|b|) over elements where that is defined
  bool ok = true;  // every element: |a-b| <= atol + rtol*|b|
};
// Element-wise comparison; shapes must match (a shape mismatch is reported as not ok).
Difference compare(const HostTensor<float>& a, const HostTensor<float>& b, double rtol,
                   double atol);

}  // namespace graphsub
