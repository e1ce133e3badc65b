#pragma once
// Chains of reshapes and transposes written as the rule language reads them. The language
// knows a reshape that merges two axes (merge_axes) or splits one in two (split_axis) and any
// permutation (permute); an exporter may write the same movement of data otherwise: torch's
// sequence-first multi-head attention reshapes [S, B, E] to [S, B*H, D] (a split and a merge
// in one node), transposes to [B*H, S, D] and reshapes to [B, H, S, D]. No rule can match such
// a chain. canonicalize_views writes each chain that holds a reshape outside the language and a
// transpose as splits into its finest factors, one permutation and merges (the example becomes
// split_axis 2 H, then permute 1_2_0_3): the same elements in the same places, checked on an
// index tensor before a chain is replaced. collapse_reshapes, run after the search, joins the
// reshapes that follow each other again.
//
// Axes of size 1 carry no data: a chain's reshapes may drop and add them anywhere. The canonical
// form keeps them with the axis they follow in the data's order, and gives an axis of size 1 that
// a reshape adds the first one dropped before it (torch's batch of one, [128, 1, 512] to
// [1, 8, 128, 64], keeps its place as the batch, as it does at any batch size).
#include <cstddef>

#include "ir/graph.h"

namespace graphsub::opt {

// Rewrites the chains in place (each node of a chain but the last read by the next one only);
// returns how many were rewritten. Dead nodes are removed.
size_t canonicalize_views(Graph& g);

// Joins each reshape whose input is a reshape read by nothing else into one reshape (and drops
// one that then gives its input's shape); returns how many reshapes went.
size_t collapse_reshapes(Graph& g);

}  // namespace graphsub::opt
