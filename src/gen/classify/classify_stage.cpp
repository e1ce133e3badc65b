// Classification streams one fingerprint range at a time, so the buckets are counted as they
// are classified; the enumeration is dropped right after, before the classes' terms are
// rebuilt, so that both are never held at once.
#include "gen/stages.h"
#include "ir/heap_release.h"
#include "ir/process_stats.h"

namespace graphsub::gen {

ClassifyOptions classify_options(const GeneratorOptions& opts) {
  ClassifyOptions co;
  co.threads = opts.threads;
  co.tolerance = opts.tolerance;
  co.reduce_from_ops = opts.reduce_from_ops;
  co.max_parts = opts.max_parts;
  return co;
}

Classified classify_stage(const Space& space, EnumerationResult en, const GeneratorOptions& opts,
                          GeneratorResult& res, StageLog& log, Reporter& rep) {
  auto t0 = Clock::now();
  ClassifyOptions co = classify_options(opts);
  Classified cl = classify_candidates(space, en, co, rep);
  en = EnumerationResult{};
  release_free_memory();
  record_classified(cl, opts, res, log, rep, t0);
  return cl;
}

void record_classified(const Classified& cl, const GeneratorOptions& opts, GeneratorResult& res,
                       StageLog& log, Reporter& rep, Clock::time_point t0, uint64_t classes_total) {
  if (classes_total == 0) classes_total = cl.classes.size();
  res.reduced_pairs = cl.reduced;
  res.reduce_from_ops = opts.reduce_from_ops;
  res.vanished_pairs = cl.vanished;
  res.classes = classes_total;
  res.parts_classified = cl.parts_done;
  log.count("buckets (fingerprints shared)", cl.buckets,
            fmt::format("   ({} graphs)", cl.shared_graphs));
  log.count("candidate pairs", cl.pairs);
  log.timed("after float re-test", cl.passed, t0);
  // Only where reduction happened (max_ops 4), so that smaller libraries keep their header.
  if (cl.reduced || cl.vanished)
    log.count("classified in reduced form", cl.reduced,
              fmt::format("   ({} reduced to identical sides, dropped)", cl.vanished));
  if (opts.max_parts)
    rep.info(
        fmt::format("  (only {} of the fingerprint ranges classified: --parts)", cl.parts_done));
  rep.info(fmt::format("  ({} classes up to renaming; peak memory so far {:.0f} MiB)",
                       classes_total, process_peak_rss_mib()));
}

}  // namespace graphsub::gen
