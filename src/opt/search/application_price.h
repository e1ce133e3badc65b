#pragma once
// The search's price of a rewrite before its graph is built. An application's new nodes are
// described (transforms/builder.h) either by a scratch copy of the parent graph they were added
// to, or by a memoised target (a Template) and the match's variables, without adding them to
// any graph. From there, price_application() works out what Rewrite::finish would make of it
// (matched outputs replaced, dead nodes dropped, new nodes identical to old ones shared)
// without editing any graph, and returns the cost the search would compute for the finished
// candidate: the parent's total, less the parent nodes that die, plus the surviving new nodes.
// Most candidates of a search are discarded for their cost, so pricing them first saves
// building their graphs.
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "opt/cost/cost_model.h"
#include "opt/transforms/builder.h"
#include "opt/transforms/rewrite.h"
#include "opt/transforms/target_memo.h"

namespace graphsub::opt {

// What the search knows of the graph being expanded (the parent): its per-node costs (0 for
// sources and constants), their sum plus CostModel::per_graph_cost(), its constant flags, and
// the model.
struct ParentCosts {
  const std::vector<double>& costs;
  double total = 0;
  const std::vector<uint8_t>& constant;
  CostModel& model;
};

// A node an application adds, as pricing sees it (pointers into the scratch graph or the
// template, valid while it is priced).
struct AddedNode {
  bool alive = false;
  const OpDef* op = nullptr;
  const Attrs* attrs = nullptr;
  std::vector<TensorRef> inputs;  // ids: the parent's below its table size, added from `first`
  const std::vector<TensorType>* outputs = nullptr;
  bool input = false;  // a graph input (never added by rewrites, but kept exact)
};

// Buffers reused across the applications priced on one graph.
struct PriceBuffers {
  std::vector<uint8_t> live, constant, in_region;
  std::vector<NodeId> alias, stack, region, candidates;
  std::vector<AddedNode> added;  // the first num_added (more keep their storage for later)
  size_t num_added = 0;
  std::vector<const TensorType*> in_types;
  std::vector<uint8_t> in_constant;
};

// `ix` indexes the parent; `scratch` is a copy of it with the application's new nodes at ids
// [first_new, scratch.num_slots()) (ids between the parent's table size and first_new are
// holes); `reps` map parent tensors to scratch tensors; `matched` are the parent nodes the
// transform matched. nullopt when a replacement's type differs from the tensor it replaces
// (Rewrite::finish refuses those).
std::optional<double> price_application(const GraphIndex& ix, const Graph& scratch,
                                        NodeId first_new, const std::vector<Replacement>& reps,
                                        const std::vector<NodeId>& matched,
                                        const ParentCosts& parent, PriceBuffers& buf);

// The same for a recorded target: its nodes as Template::replay would add them to the parent
// (from id parent.num_slots()) with variables `vars`; `reps` map parent tensors to those ids.
// Equal to replaying and pricing with the scratch overload.
std::optional<double> price_template(const GraphIndex& ix, const Template& t,
                                     const std::vector<TensorRef>& vars,
                                     const std::vector<Replacement>& reps,
                                     const std::vector<NodeId>& matched, const ParentCosts& parent,
                                     PriceBuffers& buf);

// The price of what a transform's applier described to `b` (a description builder on the
// parent of `ix`), by whichever of the two above fits.
std::optional<double> price_description(const GraphIndex& ix, const Builder& b,
                                        const std::vector<NodeId>& matched,
                                        const ParentCosts& parent, PriceBuffers& buf);

}  // namespace graphsub::opt
