#include "gen/generator.h"

#include "gen/stages.h"
#include "ir/process_stats.h"

namespace graphsub::gen {

// The pipeline, one named stage after another (gen/stages.h); each stage's work is in its
// folder, so this function only says in which order they run and what flows between them.
GeneratorResult run_generator(const GeneratorOptions& opts, const Prover& prove, Reporter& rep) {
  GeneratorResult res;
  auto t_all = Clock::now();
  StageLog log(res, rep);
  Space space = search_space(opts, res);
  EnumerationResult en = enumerate_stage(space, opts, res, log, rep);
  Classified cl = classify_stage(space, std::move(en), opts, res, log, rep);
  std::vector<RuleClass> classes = rule_classes(cl, opts.threads, rep);
  link_most_general_forms(classes, rep);
  Pruner pr(prove, opts.max_prover_vars, res.verifier_calls);
  ProofCounts counts = prove_stage(classes, opts, pr, res, log, rep);
  prune_stage(classes, counts, pr, res, log);
  select_stage(opts, res, log);
  res.seconds = since(t_all);
  res.peak_rss_bytes = process_peak_rss_bytes();
  return res;
}

}  // namespace graphsub::gen
