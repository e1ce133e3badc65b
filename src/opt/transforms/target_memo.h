#pragma once
// What instantiating a rule's target gives under given bindings, remembered per rule. It
// depends only on the types of the tensors bound to the variables, on which variables are
// bound to one tensor, and on the parameter values (the target reads nothing else), and the
// same matches recur on every graph of a search. So a target that does not type-check is not
// rebuilt and refused again (its reason is kept), and one that does is priced from the recorded
// nodes (a Template) instead of re-running the term instantiation. Entries are found by a
// hash and confirmed by comparing the types and values themselves. Thread-safe.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "opt/transforms/result.h"

namespace graphsub::opt {

// The nodes a target instantiation added, in order, with inputs that are either a bound
// variable or an earlier template node.
struct Template {
  struct Ref {
    bool is_var = true;
    uint32_t index = 0;  // variable index, or template node index
    uint32_t output = 0;
  };
  struct Node {
    const OpDef* op = nullptr;
    Attrs attrs;
    std::vector<Ref> inputs;
    std::vector<TensorType> outputs;
  };
  std::vector<Node> nodes;
  std::vector<Ref> targets;   // per target output
  bool adds_sources = false;  // some node is a weight: replay() gives it no data

  // Records the nodes [first, g.num_slots()) of `g` and the target tensors. nullopt when a node
  // reads a tensor that is neither a bound variable nor one of those nodes.
  static std::optional<Template> record(const Graph& g, NodeId first,
                                        const std::vector<TensorRef>& vars,
                                        const std::vector<TensorRef>& targets);
  // Adds the nodes to `g` (output types as recorded; weights without data: for pricing) and
  // returns the target tensors.
  std::vector<TensorRef> replay(Graph& g, const std::vector<TensorRef>& vars) const;
  // The same, writing the target tensors into `targets` (its storage reused).
  void replay(Graph& g, const std::vector<TensorRef>& vars, std::vector<TensorRef>& targets) const;
};

class TargetMemo {
 public:
  using Params = std::vector<std::optional<AxiomParam>>;
  struct Outcome {
    std::optional<NoMatch> failure;  // why the target does not type-check, when it does not
    std::optional<Template> nodes;   // when it does and the nodes could be recorded
  };

  // The recorded outcome under these bindings, or null.
  std::shared_ptr<const Outcome> find(const Graph& g, const std::vector<TensorRef>& vars,
                                      const Params& params) const;
  void add(const Graph& g, const std::vector<TensorRef>& vars, const Params& params,
           Outcome outcome);

 private:
  struct Entry {
    std::vector<TensorType> types;
    std::vector<uint32_t> same_as;  // per variable: the first variable bound to its tensor
    Params params;
    std::shared_ptr<const Outcome> outcome;
  };
  static uint64_t key(const Graph& g, const std::vector<TensorRef>& vars, const Params& params);

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::vector<Entry>> entries_;  // looked up, never iterated
};

}  // namespace graphsub::opt
