// Enumeration is the only stage that sees every graph; it reports how many and how much of
// them went to temporary files, the figures that decide whether a larger max_ops fits.
#include "gen/stages.h"

namespace graphsub::gen {

EnumerationResult enumerate_stage(const Space& space, const GeneratorOptions& opts,
                                  GeneratorResult& res, StageLog& log, Reporter& rep) {
  auto t0 = Clock::now();
  EnumerationResult en = enumerate_graphs(space, opts.threads, rep);
  res.graphs = en.stats.graphs;
  res.redundant_values = en.stats.redundant;
  log.timed("graphs enumerated", en.stats.graphs, t0);
  res.unrepresentative_graphs = en.stats.unrepresentative;
  if (space.minimal_reads)
    rep.info(
        fmt::format("  ({} values of the largest graphs not representatives, left unread; {} "
                    "graphs with such a partial output left out)",
                    en.stats.redundant, en.stats.unrepresentative));
  rep.info(fmt::format("  ({} split requests; {:.1f} MiB of graphs streamed to temporary files)",
                       en.requests.size(), static_cast<double>(en.spilled_bytes) / (1 << 20)));
  return en;
}

}  // namespace graphsub::gen
