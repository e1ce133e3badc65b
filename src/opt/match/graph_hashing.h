#pragma once
// Fast structural facts for the search's inner loop, where every candidate graph must be
// checked for cycles and hashed for deduplication.
//  - topological_order(): Kahn's algorithm over flat arrays; false on a cycle.
//  - IncrementalHasher: the canonical node hashes of src/ir/hash.h (node_hashes /
//    structural_hash give exactly the same values), computed for a candidate from its
//    parent's: only nodes whose content or inputs changed are re-hashed. A node whose object
//    is the very one of the parent (copy-on-write sharing) at the same id has the same
//    content; it keeps its hash unless something it reads changed.
#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace graphsub::opt {

// Alive nodes in an order where every node follows the nodes it reads; false on a cycle.
bool topological_order(const Graph& g, std::vector<NodeId>& order);

// Whether `child`, made from the graph `ix` indexes by a rewrite, is acyclic and references
// no missing node: topological_order(child, ...)'s answer. `position` is the parent's
// topological position of each node. Only the nodes whose objects differ from the parent's
// are examined when they fit between the positions of what they read and what reads them
// (the usual case); otherwise the whole child is sorted. `order` is scratch.
class GraphIndex;
bool rewrite_acyclic(const GraphIndex& ix, const std::vector<uint32_t>& position,
                     const Graph& child, std::vector<NodeId>& order);

// Canonical graph hash (structural_hash) from node hashes (node_hashes).
uint64_t graph_hash(const Graph& g, const std::vector<uint64_t>& node_hash);

// Node hashes of `child` given its parent's, and a topological order of `child`.
std::vector<uint64_t> child_node_hashes(const Graph& parent,
                                        const std::vector<uint64_t>& parent_hash,
                                        const Graph& child, const std::vector<NodeId>& child_order);

}  // namespace graphsub::opt
