#pragma once
// A transform rewrites a graph at one place into an equivalent graph. Rules from rule files
// and the built-in structural rules are both transforms; the search only sees this interface.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "opt/cost_model.h"
#include "opt/graph_index.h"

namespace graphsub::opt {

struct Candidate {
  Graph graph;
  std::string where;  // the matched nodes, for reports ("conv 'a.w' + relu at node 12")
  // The application's number among the transform's applications to this graph, when the
  // transform numbers them itself (a priced apply skips some); unset: the emission order.
  std::optional<size_t> ordinal;
  // Set by a priced apply: Pricing::admit already accepted this candidate's cost.
  bool admitted = false;
};

using EmitFn = std::function<void(Candidate&&)>;

// What a search knows of the graph being expanded, so a transform can price an application
// before building its graph: the parent's per-node costs (0 for sources and constants), their
// sum plus CostModel::per_graph_cost(), its constant flags, the model, and the search's verdict
// on a price (false: a graph of this cost would be discarded, so it is not built).
struct Pricing {
  const std::vector<double>& costs;
  double total = 0;
  const std::vector<uint8_t>& constant;
  CostModel& model;
  std::function<bool(double)> admit;
};

class Transform {
 public:
  virtual ~Transform() = default;
  // Stable name used in reports and by --disable-rule.
  virtual const std::string& name() const = 0;
  // Where it comes from: "rules/default.rules:12" or "built-in".
  virtual std::string origin() const = 0;
  // Emits one candidate per valid application in `index.graph()`, in a deterministic order
  // (ascending node ids of the match). Applications that do not type-check or that would let
  // a replaced operator's tensor escape are not emitted; the caller rejects cycles. Must not
  // throw for ordinary graphs.
  virtual void apply(const GraphIndex& index, const EmitFn& emit) const = 0;
  // As apply(), but an application may be priced first and skipped when pricing.admit refuses
  // its cost; admit is called at most once per application, and emitted candidates carry their
  // ordinal. The default prices nothing (plain apply()).
  virtual void apply_priced(const GraphIndex& index, const Pricing& pricing,
                            const EmitFn& emit) const {
    (void)pricing;
    apply(index, emit);
  }
};

}  // namespace graphsub::opt
