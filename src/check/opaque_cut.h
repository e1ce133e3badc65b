#pragma once
// Cutting a graph at its opaque nodes, for the equivalence check (check/equivalence.h).
//
// Opaque nodes have no reference semantics, so both graphs are cut at them: each opaque
// node's outputs become extra inputs (the same random values in both graphs, matched by the
// node's name) and each tensor an opaque node reads becomes an extra output that is compared
// too. Since the optimizer never rewrites through an opaque node, the graphs are equal
// exactly when every region between opaque nodes computes the same function of its
// boundary, which is what the cut graphs test. Random boundary values may be outside the
// range the opaque node would produce (e.g. indices), so the check of a model with opaque
// nodes is a check of the rewritten regions, not of the whole model end to end: the
// ONNX Runtime cross-check (tools/ort_crosscheck.js) covers that.
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace graphsub {

// The names of the boundary outputs a cut of `g` can have ("<opaque node> input <k>"): one
// per input of an opaque node that is not a graph input or weight. Two graphs with the same
// opaque nodes share the names of the inputs both compute; an input computed in one graph
// and a weight in the other (weights folded by the optimizer) has a name in one only.
std::set<std::string> opaque_boundary(const Graph& g);

// The graph with every opaque node cut out, and as extra outputs the boundary tensors named
// in `boundary` (every one of opaque_boundary(g) when null), in name order; `boundary_names`
// receives their names. Throws Error naming an opaque node without a name.
Graph cut_at_opaque(const Graph& g, std::vector<std::string>* boundary_names = nullptr,
                    const std::set<std::string>* boundary = nullptr);

// The names of the graph's opaque nodes (the keys that match them across graphs).
std::set<std::string> opaque_node_names(const Graph& g);

}  // namespace graphsub
