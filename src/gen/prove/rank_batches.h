#pragma once
// The collectives of the proving passes on several ranks: each rank decides its own classes,
// and the rules that go to the prover are gathered into one batch, in the order one process
// would send them (by canonical key), so that every verifier lane sees the same rules in the
// same order on any number of ranks. One process passes its own through unchanged.
#include <cstdint>
#include <set>
#include <vector>

#include "gen/cluster.h"
#include "gen/prove/prover.h"

namespace graphsub::gen {

// Collective: every rank's items (each rank's in key order), merged by key. This rank's items
// keep their equalities; the others' carry only their keys.
std::vector<BatchItem> gather_items(Cluster& cluster, std::vector<BatchItem> mine);

// Collective: each counter summed over the ranks.
std::vector<uint64_t> sum_over_ranks(Cluster& cluster, std::vector<uint64_t> mine);

// Collective: the union of every rank's values.
std::set<int> union_over_ranks(Cluster& cluster, const std::set<int>& mine);

}  // namespace graphsub::gen
