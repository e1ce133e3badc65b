// Proving is the stage that costs the most (the prover's calls); its counts say how many
// calls pruning saved (implied, not tried) and its times which verdicts took them.
#include "gen/stages.h"

namespace graphsub::gen {

ProofCounts prove_stage(std::vector<RuleClass>& classes, const GeneratorOptions& opts, Pruner& pr,
                        GeneratorResult& res, StageLog& log, Reporter& rep) {
  // A class needs no proof of its own when it is a renaming instance of a proven class, or
  // when one of its common-subgraph generalizations holds (it is then also redundant).
  auto t0 = Clock::now();
  for (auto& c : classes) pr.note_class(c.eq.key);
  ProofCounts counts;
  prove_lifted_rules(classes, opts.lift_domains, opts.threads, pr, counts, rep);
  prove_in_waves(classes, opts.threads, pr, counts, rep);
  res.implied = counts.implied;
  res.not_tried = counts.not_tried;
  res.conditional = counts.conditional;
  uint64_t proved_pairs = 0;
  for (auto& c : classes)
    if (c.state == RuleClass::Proved || c.state == RuleClass::Implied) proved_pairs += c.pairs;
  log.timed("proved", proved_pairs, t0);
  res.prover_times = pr.times();
  res.generalization_calls = pr.generalization_calls();
  res.too_many_vars = pr.too_many_vars();
  if (res.too_many_vars)
    rep.info(fmt::format("  ({} rules not sent to the prover: more than {} tensor variables)",
                         res.too_many_vars, opts.max_prover_vars));
  for (auto& c : classes)
    if (c.state == RuleClass::Failed) res.unproved.push_back({c.eq, c.reason, c.pairs, c.reduced});
  return counts;
}

}  // namespace graphsub::gen
