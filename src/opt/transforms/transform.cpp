#include "opt/transforms/transform.h"

#include <fmt/format.h>

namespace graphsub::opt {

Result<Graph> build_application(const Transform& t, const GraphIndex& ix, const Match& m) {
  Rewrite rw(ix);
  std::vector<Replacement> reps;
  {
    Builder b(rw, reps);
    if (Outcome o = t.apply(ix, m, b); !o) return o.failure();
  }
  std::optional<Graph> out = std::move(rw).finish(reps);
  if (!out) return NoMatch("a replacement's type differs from the tensor it replaces");
  return std::move(*out);
}

void apply_everywhere(const Transform& t, const GraphIndex& ix,
                      const std::function<void(Candidate&&)>& emit) {
  std::vector<Match> matches;
  const size_t n = t.find(ix, matches);
  for (size_t k = 0; k < n; ++k)
    if (Result<Graph> g = build_application(t, ix, matches[k]))
      emit({std::move(*g), t.where(ix, matches[k]), k});
}

std::string node_label(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  std::string s = n.op->name;
  if (!n.name.empty()) return fmt::format("{} '{}'", s, n.name);
  // Operators built in code have no names: name them by the first weight they read.
  for (auto r : n.inputs)
    if (g.node(r.node).is_weight()) return fmt::format("{} '{}'", s, g.node(r.node).name);
  return fmt::format("{} #{}", s, id);
}

}  // namespace graphsub::opt
