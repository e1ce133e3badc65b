#pragma once
// The cost of a rewrite before its graph is built. An application's new nodes are described
// either by a scratch copy of the parent graph they were added to, or by a memoised target
// (a Template) and the match's variables, without adding them to any graph. From there,
// price_application() works out what Rewrite::finish would make of it (matched outputs
// replaced, dead nodes dropped, new nodes identical to old ones shared) without editing any
// graph, and returns the cost the search would compute for the finished candidate: the
// parent's total, less the parent nodes that die, plus the surviving new nodes. Most
// candidates of a search are discarded for their cost, so pricing them first saves building
// their graphs.
#include <functional>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "opt/rewrite.h"
#include "opt/target_memo.h"
#include "opt/transform.h"

namespace graphsub::opt {

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

// Buffers reused across the applications of one transform to one graph.
struct PriceBuffers {
  std::vector<uint8_t> live, constant, in_region;
  std::vector<NodeId> alias, stack, region, candidates;
  std::vector<AddedNode> added;  // the first num_added (more keep their storage for later)
  size_t num_added = 0;
  std::vector<Replacement> reps;
  std::vector<const TensorType*> in_types;
  std::vector<uint8_t> in_constant;
};

// `ix` indexes the graph being expanded (the parent); `scratch` is a copy of it with the
// application's new nodes at ids [first_new, scratch.num_slots()) (ids between the parent's
// table size and first_new are holes); `reps` map parent tensors to scratch tensors;
// `matched` are the parent nodes the rule matched. nullopt when a replacement's type differs
// from the tensor it replaces (Rewrite::finish refuses those).
std::optional<double> price_application(const GraphIndex& ix, const Graph& scratch,
                                        NodeId first_new, const std::vector<Replacement>& reps,
                                        const std::vector<NodeId>& matched, const Pricing& pricing,
                                        PriceBuffers& buf);

// The same for a memoised target: its nodes as Template::replay would add them to the parent
// (from id parent.num_slots()) with the match's variables `vars`, its targets replacing
// `outputs` (per source output). Equal to replaying and pricing with the scratch overload.
std::optional<double> price_template(const GraphIndex& ix, const Template& t,
                                     const std::vector<TensorRef>& vars,
                                     const std::vector<TensorRef>& outputs,
                                     const std::vector<NodeId>& matched, const Pricing& pricing,
                                     PriceBuffers& buf);

// A scratch copy of the parent graph, to add one application's nodes at a time to and price
// them (the scratch overload of price_application) before anything is built for real.
class ScratchGraph {
 public:
  // The scratch graph, a copy of `parent` (made afresh when the holes that priced
  // applications leave behind add up); the application's nodes take ids from `first` on.
  Graph& begin(const Graph& parent, NodeId& first);
  // Removes the nodes added since `first`.
  void clear_from(NodeId first);

 private:
  std::optional<Graph> g_;
};

// Prices one application on `scratch`: `build_and_price(scratch graph, first new id)` adds its
// nodes and prices them; they are removed afterwards. nullopt when the application does not
// type-check (the builder throws Error) or price_application refuses it.
std::optional<double> price_on_scratch(
    ScratchGraph& scratch, const Graph& parent,
    const std::function<std::optional<double>(Graph&, NodeId)>& build_and_price);

}  // namespace graphsub::opt
