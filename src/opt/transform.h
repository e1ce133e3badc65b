#pragma once
// A transform rewrites a graph at one place into an equivalent graph. Rules from rule files
// and the built-in structural rules are both transforms; the search only sees this interface.
#include <functional>
#include <string>

#include "ir/graph.h"
#include "opt/graph_index.h"

namespace graphsub::opt {

struct Candidate {
  Graph graph;
  std::string where;  // the matched nodes, for reports ("conv 'a.w' + relu at node 12")
};

using EmitFn = std::function<void(Candidate&&)>;

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
};

}  // namespace graphsub::opt
