#pragma once
// Remembers the bindings under which a rule's target failed to type-check. Whether
// instantiating a target throws depends only on the types of the tensors bound to its
// variables and on the parameter values (the target reads nothing else), so a failure seen
// once need not be rebuilt, thrown and caught again on every later graph of a search, where
// the same matches recur. Entries are found by a hash and confirmed by comparing the types and
// values themselves. Thread-safe.
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace graphsub::opt {

class TypeCheckMemo {
 public:
  using Params = std::vector<std::optional<AxiomParam>>;

  bool known_failure(const Graph& g, const std::vector<TensorRef>& vars,
                     const Params& params) const;
  void add_failure(const Graph& g, const std::vector<TensorRef>& vars, const Params& params);

 private:
  struct Entry {
    std::vector<TensorType> types;
    Params params;
  };
  static uint64_t key(const Graph& g, const std::vector<TensorRef>& vars, const Params& params);

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::vector<Entry>> failures_;  // looked up, never iterated
};

}  // namespace graphsub::opt
