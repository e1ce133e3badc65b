#pragma once
// Runs the enumeration on several threads and gathers its graphs into fingerprint order.
//
// Two rounds: first every graph of up to max_ops-1 operators (a small fraction of the work),
// whose fingerprints become the pieces a disconnected partner can be assembled from; then the
// graphs of exactly max_ops operators. Work is split by first operator; every graph is
// produced exactly once, and the final order (fingerprint, then graph) does not depend on
// which thread produced what.
#include <cstdint>
#include <vector>

#include "gen/enumerator.h"
#include "ir/report.h"

namespace graphsub::gen {

struct EnumerationResult {
  std::vector<GraphRecord> records;    // sorted by (fp, graph); bare graphs included
  std::vector<SplitRequest> requests;  // sorted by graph, then blocks
  EnumStats stats;
};

EnumerationResult enumerate_graphs(const Space& s, int threads, Reporter& rep);

// Graphs sharing a fingerprint: [begin, end) ranges of `records`.
struct Bucket {
  size_t begin = 0, end = 0;
  size_t size() const { return end - begin; }
};
std::vector<Bucket> buckets_of(const std::vector<GraphRecord>& records);

}  // namespace graphsub::gen
