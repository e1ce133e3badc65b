#pragma once
// A place where a transform applies: what its searcher found in a graph, and all its applier
// reads besides the graph. Rules fill it from their source pattern; the built-in transforms
// use the same fields for their own roles (documented at each).
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace graphsub::opt {

struct Match {
  std::vector<TensorRef> vars;                    // bound tensors (a rule: per tensor variable)
  std::vector<std::optional<AxiomParam>> params;  // per parameter variable (unset: unbound)
  std::vector<TensorRef> outputs;                 // the tensors the replacement replaces
  std::vector<NodeId> internal;                   // matched operator nodes, ascending
};

// out[count], cleared, with count advanced: searchers write their matches into a buffer the
// caller keeps across calls, whose Match objects keep their vectors' storage.
inline Match& next_match(std::vector<Match>& out, size_t& count) {
  if (count == out.size()) out.emplace_back();
  Match& m = out[count++];
  m.vars.clear();
  m.params.clear();
  m.outputs.clear();
  m.internal.clear();
  return m;
}

}  // namespace graphsub::opt
