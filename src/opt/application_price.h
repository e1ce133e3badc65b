#pragma once
// The cost of a rewrite before its graph is built. A rule application adds its target's nodes
// to a scratch copy of the parent graph; from there, price_application() works out what
// Rewrite::finish would make of it (matched outputs replaced, dead nodes dropped, new nodes
// identical to old ones shared) without editing any graph, and returns the cost the search
// would compute for the finished candidate: the parent's total, less the parent nodes that
// die, plus the surviving new nodes. Most candidates of a search are discarded for their
// cost, so pricing them first saves building their graphs.
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "opt/rewrite.h"
#include "opt/transform.h"

namespace graphsub::opt {

// Buffers reused across the applications of one transform to one graph.
struct PriceBuffers {
  std::vector<uint8_t> live, constant, in_region;
  std::vector<NodeId> alias, stack, region, candidates;
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

}  // namespace graphsub::opt
