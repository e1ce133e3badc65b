#pragma once
// A transform rewrites a graph at one place into an equivalent graph. Rules from rule files
// and the built-in structural rules are both transforms. A transform has two parts, as egg's
// rewrites do: a searcher (find) that lists the places where it may apply, and an applier
// (apply) that writes the replacement for one of them to a Builder or says, as a value, why
// that place is not an application after all. A transform knows nothing of costs: the search
// prices what an applier describes and builds only what it admits (search.h).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "opt/match/graph_index.h"
#include "opt/match/match.h"
#include "opt/transforms/builder.h"
#include "opt/transforms/result.h"

namespace graphsub::opt {

class Transform {
 public:
  virtual ~Transform() = default;
  // Stable name used in reports and by --disable-rule.
  virtual const std::string& name() const = 0;
  // Where it comes from: "rules/default.rules:12" or "built-in".
  virtual std::string origin() const = 0;

  // The searcher: writes the matches in `ix.graph()` to out[0..n), n returned, in a
  // deterministic order (ascending node ids of the match). Match objects already in `out` are
  // overwritten in place (next_match), so a caller that keeps `out` does not allocate.
  virtual size_t find(const GraphIndex& ix, std::vector<Match>& out) const = 0;
  // The applier: adds the replacement for match `m` (one of find's on `ix`) to `b` and names
  // the tensors it replaces (Builder::replace), or returns why `m` is not an application
  // (a target that does not type-check here, shapes outside the rule). Must not throw for
  // ordinary graphs. Whether the replacement's types equal those it replaces, and whether the
  // result has a cycle, is checked by the caller.
  virtual Outcome apply(const GraphIndex& ix, const Match& m, Builder& b) const = 0;
  // The matched nodes, for reports ("conv 'a.w' + relu"); asked only of applications kept.
  virtual std::string where(const GraphIndex& ix, const Match& m) const = 0;
};

// One application built: the graph after it, where it applied, and the index of its match
// among the transform's matches on the parent graph (Step::ordinal, to replay it).
struct Candidate {
  Graph graph;
  std::string where;
  size_t ordinal = 0;
};

// The graph after applying `t` at match `m` of `ix`'s graph, or why that is not an
// application (including a replacement whose type differs from the tensor it replaces).
Result<Graph> build_application(const Transform& t, const GraphIndex& ix, const Match& m);

// Every application of `t` to `ix`'s graph, built, in match order (cycles not checked).
void apply_everywhere(const Transform& t, const GraphIndex& ix,
                      const std::function<void(Candidate&&)>& emit);

// "conv 'stage1.conv0.w'" style label of a node for Transform::where.
std::string node_label(const Graph& g, NodeId id);

}  // namespace graphsub::opt
