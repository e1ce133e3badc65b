// Enumeration and classification split over ranks. The exchange of fingerprint ranges goes
// through the run directory: each rank writes its graphs of max_ops operators as 256 part
// files by fingerprint range, and the rank that classifies a range reads that range's file of
// every rank, so no rank holds the whole table; of the classes, each rank keeps those it
// proves. Both shares are kept, each under a temporary
// name renamed when whole: a rerun skips every share it finds.
#include "gen/classify/classes_file.h"
#include "gen/prove/rank_batches.h"
#include "gen/prove/rule_owner.h"
#include "gen/shard_files.h"
#include "gen/stages.h"
#include "ir/heap_release.h"

namespace graphsub::gen {

namespace {

// A rank's classification and the enumeration's counts (the same on every rank), as kept.
struct ClassShard {
  EnumStats stats;
  uint64_t requests = 0, spilled_bytes = 0;
  Classified classified;
};

std::string class_shard_bytes(const ClassShard& c) {
  ByteWriter w;
  w.put(c.stats);
  w.put(c.requests);
  w.put(c.spilled_bytes);
  put_classified(w, c.classified);  // one copy of the classes' bytes, not two
  return std::move(w.bytes());
}

// `keep`: the classes kept (this rank's).
ClassShard class_shard_from(const std::string& bytes, const std::string& what,
                            const std::function<bool(const std::string&)>& keep) {
  ByteReader in(bytes, what);
  ClassShard c;
  c.stats = in.get<EnumStats>();
  c.requests = in.get<uint64_t>();
  c.spilled_bytes = in.get<uint64_t>();
  constexpr size_t head = sizeof(EnumStats) + 2 * sizeof(uint64_t);
  c.classified = classified_from_bytes(std::string_view(bytes).substr(head), what, keep);
  return c;
}

}  // namespace

Classified sharded_classify_stage(const Space& space, const GeneratorOptions& opts,
                                  Cluster& cluster, GeneratorResult& res, StageLog& log,
                                  Reporter& rep) {
  const int rank = cluster.rank(), ranks = cluster.size();
  make_dirs(opts.run_dir);
  const std::string mine = shard_path(opts.run_dir, "classes", rank);
  const bool done = path_exists(mine);
  auto t0 = Clock::now();
  EnumerationResult en;
  if (done)
    rep.info(fmt::format("  (classification shard {} of {} found in {}, not run again)", rank,
                         ranks, mine));
  else
    en = enumerate_graphs(space, opts.threads, rep, EnumShard{rank, ranks, opts.run_dir});
  rep.progress("enumerate", 0, 0, "waiting for the other ranks");
  cluster.barrier();  // every rank's graphs are in the run directory
  auto t1 = Clock::now();
  if (!done) {
    gather_shards(en);
    ClassifyOptions co = classify_options(opts);
    co.rank = rank;
    co.ranks = ranks;
    ClassShard own;
    own.classified = classify_candidates(space, en, co, rep);
    own.stats = en.stats;
    own.requests = en.requests.size();
    own.spilled_bytes = en.spilled_bytes;
    en = EnumerationResult{};
    release_free_memory();
    write_file_whole(mine, class_shard_bytes(own));
  }
  rep.progress("pair and re-test", 0, 0, "waiting for the other ranks");
  cluster.barrier();  // every rank's classes are in the run directory
  Classified all;
  ClassShard first;
  for (int r = 0; r < ranks; ++r) {
    std::string path = shard_path(opts.run_dir, "classes", r);
    std::optional<std::string> bytes = read_file_if_any(path);
    if (!bytes)
      throw Error(fmt::format("the classification shard of rank {} is missing ({})", r, path));
    // Only the classes this rank proves (rule_owner) are kept: no rank holds them all.
    ClassShard c = class_shard_from(
        *bytes, path, [&](const std::string& key) { return rule_owner(key, ranks) == rank; });
    bytes.reset();
    if (r == 0) {
      first.stats = c.stats;
      first.requests = c.requests;
      first.spilled_bytes = c.spilled_bytes;
      all.parts_done = c.classified.parts_done;
    }
    merge_classified(all, std::move(c.classified));
  }
  release_free_memory();  // the shards read, and the other ranks' classes dropped
  const uint64_t classes_total = sum_over_ranks(cluster, {all.classes.size()})[0];
  // The stage times: enumeration up to the first barrier, classification from there on.
  record_enumeration(space, first.stats, first.requests, first.spilled_bytes, res, log, rep,
                     std::chrono::duration<double>(t1 - t0).count());
  record_classified(all, opts, res, log, rep, t1, classes_total);
  return all;
}

}  // namespace graphsub::gen
