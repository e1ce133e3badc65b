#pragma once
// Runs the enumeration on several threads and gathers the graphs that share a fingerprint
// with another graph, in fingerprint order.
//
// Two rounds: first every graph of up to max_ops-1 operators (a small fraction of the work),
// whose fingerprints become the pieces a disconnected partner can be assembled from; then the
// graphs of exactly max_ops operators. Work is split by first operator; every graph is
// produced exactly once, and the final order (fingerprint, then graph) does not depend on
// which thread produced what.
//
// The second round is most of the graphs (hundreds of millions at max_ops 4), and most of
// them have a fingerprint of their own, so they can never be part of a candidate. They are
// streamed to temporary files, 16 bytes each (GraphPacker), split by the top bits of the
// fingerprint; each part is then sorted on its own and only the graphs whose fingerprint is
// shared are handed on, one part at a time (classify_candidates streams them). Memory is
// the small graphs plus one part per thread.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gen/enumerate/enumerator.h"
#include "gen/enumerate/small_graphs.h"
#include "ir/report.h"

namespace graphsub::gen {

struct LargeGraphs;

// One rank's share of the enumeration of a run kept on disk: the graphs of max_ops operators
// whose first operator is every ranks-th root task from `rank` on, kept in `dir` (the run
// directory). No dir: the whole enumeration, in temporary files.
struct EnumShard {
  int rank = 0, ranks = 1;
  std::string dir;
  // Measurement (generate --shards): of the root tasks of the largest graphs, only task i
  // with i mod sample_of < sample (the shares of ranks 0 to sample-1 of sample_of); 0: all.
  int sample = 0, sample_of = 0;
  // Tests: the largest graphs packed in 128 bits even where 64 hold them.
  bool wide_records = false;
};

struct EnumerationResult {
  // Every graph of fewer than max_ops operators and the bare graphs: the pieces disconnected
  // partners are assembled from.
  SmallGraphs small;
  std::vector<SplitRequest> requests;  // sorted by graph, then blocks
  EnumStats stats;
  uint64_t spilled_bytes = 0;  // written to temporary files

  // The records by fingerprint range: the parts in order are all records in (fp, graph)
  // order. A part holds the graphs (of any size, bare ones included) whose fingerprint
  // another graph shares, or every graph with keep_singletons. Each part can be taken once
  // (its file is then gone); parts may be taken on several threads at once.
  size_t num_parts() const;
  std::vector<GraphRecord> take_part(size_t p, bool keep_singletons = false);

  std::shared_ptr<LargeGraphs> large_;  // the spilled graphs of max_ops operators
  EnumShard shard_;                     // what enumerate_graphs was given
};

// With a shard kept on disk, the graphs of fewer than max_ops operators (every rank computes
// them) and this rank's share of the largest ones, written to the run directory (or found
// there from an earlier run); gather_shards then reads every rank's share.
EnumerationResult enumerate_graphs(const Space& s, int threads, Reporter& rep,
                                   const EnumShard& shard = {});
// For an enumeration of a kept shard, once every rank's share is written: their counts, split
// requests and whole graphs join this result, and take_part reads each part from all of them.
void gather_shards(EnumerationResult& en);

// Whether the graphs of `ops` operators are enumerated in prefix form only (Enumerator's
// prefix_variables): the largest ones, and at N = 5 the smaller graphs of 4 operators too.
bool only_prefix_forms(const Space& s, int ops);

// Every part in order (for tests and small spaces).
std::vector<GraphRecord> take_all_records(EnumerationResult& en, bool keep_singletons);

// Graphs sharing a fingerprint: [begin, end) ranges of `records`.
struct Bucket {
  size_t begin = 0, end = 0;
  size_t size() const { return end - begin; }
};
std::vector<Bucket> buckets_of(const std::vector<GraphRecord>& records);

}  // namespace graphsub::gen
