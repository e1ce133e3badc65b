// Enumeration is the only stage that sees every graph; it reports how many and how much of
// them went to temporary files, the figures that decide whether a larger max_ops fits.
#include "gen/stages.h"

namespace graphsub::gen {

EnumerationResult enumerate_stage(const Space& space, const GeneratorOptions& opts,
                                  GeneratorResult& res, StageLog& log, Reporter& rep) {
  auto t0 = Clock::now();
  EnumShard shard;
  shard.sample = opts.sample_shards;
  shard.sample_of = opts.sample_of;
  EnumerationResult en = enumerate_graphs(space, opts.threads, rep, shard);
  record_enumeration(space, en.stats, en.requests.size(), en.spilled_bytes, res, log, rep,
                     since(t0));
  if (opts.sample_of)
    rep.info(
        fmt::format("  (graphs of {} operators: only the shares of ranks 0 to {} of {}: "
                    "--shards)",
                    space.max_ops, opts.sample_shards - 1, opts.sample_of));
  return en;
}

void record_enumeration(const Space& space, const EnumStats& stats, uint64_t requests,
                        uint64_t spilled_bytes, GeneratorResult& res, StageLog& log, Reporter& rep,
                        double seconds) {
  res.graphs = stats.graphs;
  res.redundant_values = stats.redundant;
  log.timed("graphs enumerated", stats.graphs, seconds);
  res.unrepresentative_graphs = stats.unrepresentative;
  if (space.minimal_reads)
    rep.info(
        fmt::format("  ({} values of the largest graphs not representatives, left unread; {} "
                    "graphs with such a partial output left out)",
                    stats.redundant, stats.unrepresentative));
  rep.info(fmt::format("  ({} split requests; {:.1f} MiB of graphs streamed to files)", requests,
                       static_cast<double>(spilled_bytes) / (1 << 20)));
}

}  // namespace graphsub::gen
