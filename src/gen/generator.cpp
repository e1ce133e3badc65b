#include "gen/generator.h"

#include "core/error.h"
#include "gen/shard_files.h"
#include "gen/stages.h"
#include "ir/process_stats.h"
#include "verify/verifier.h"

namespace graphsub::gen {

// The pipeline, one named stage after another (gen/stages.h); each stage's work is in its
// folder, so this function only says in which order they run and what flows between them.
GeneratorResult run_generator(const GeneratorOptions& opts, const Prover& prove, Reporter& rep) {
  GeneratorResult res;
  auto t_all = Clock::now();
  StageLog log(res, rep);
  Cluster& cluster = opts.cluster ? *opts.cluster : single_process();
  if (cluster.size() > 1 && opts.run_dir.empty())
    throw Error("a generation on several ranks needs a run directory that every rank can read");
  Space space = search_space(opts, res);
  Classified cl;
  if (opts.run_dir.empty()) {
    EnumerationResult en = enumerate_stage(space, opts, res, log, rep);
    cl = classify_stage(space, std::move(en), opts, res, log, rep);
  } else {
    cl = sharded_classify_stage(space, opts, cluster, res, log, rep);
  }
  std::vector<RuleClass> classes = rule_classes(cl, opts.threads, rep);
  link_most_general_forms(classes, rep);
  // The rules of a batch this rank's verifier lanes check (verifier_prover splits them so).
  verify::LaneShare share{cluster.rank(), cluster.size()};
  Pruner pr(prove, opts.max_prover_vars, res.verifier_calls, cluster,
            [share](size_t k) { return share.owns_rule(k); });
  ProofCounts counts = prove_stage(classes, opts, pr, res, log, rep);
  prune_stage(classes, counts, pr, res, log);
  const uint64_t own_classes = classes.size();
  unproved_stage(std::move(classes), cluster, res);
  select_stage(opts, res, log);
  res.seconds = since(t_all);
  res.peak_rss_bytes = process_peak_rss_bytes();
  ByteWriter w;
  w.put(RankFigures{res.seconds, res.peak_rss_bytes, own_classes});
  for (const std::string& bytes : cluster.all_gather(w.bytes()))
    res.ranks.push_back(ByteReader(bytes, "rank figures").get<RankFigures>());
  return res;
}

}  // namespace graphsub::gen
