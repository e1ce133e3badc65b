// The library keeps only what nothing more general already states; the three counts show how
// much each kind of generality (renaming, parameter, common subgraph) removed.
#include "gen/prove/rank_batches.h"
#include "gen/stages.h"

namespace graphsub::gen {

void prune_stage(const std::vector<RuleClass>& classes, const ProofCounts& counts, Pruner& pr,
                 GeneratorResult& res, StageLog& log) {
  // Renaming: one most general form per class. Parameter lifting: the classes a proven lifted
  // rule covers are instances of it. (Each rank counts its own classes.)
  auto t0 = Clock::now();
  uint64_t after_renaming = 0, after_lifting = 0;
  for (auto& c : classes)
    if (c.state != RuleClass::Failed && !general_form_holds(classes, c)) {
      ++after_renaming;
      after_lifting += !c.by_lift;
    }
  // Common-subgraph pruning: the valid rules that nothing more general covers.
  std::vector<uint64_t> sum =
      sum_over_ranks(pr.cluster(), {after_renaming, after_lifting, pr.generalizations_kept()});
  log.timed("after renaming", sum[0], t0);
  t0 = Clock::now();
  log.timed("after parameter lifting", sum[1] + counts.valid_lifts, t0);
  t0 = Clock::now();
  res.rules = pr.irredundant();
  res.generalized = sum[2];
  res.lifted = lifted_count(res.rules);
  log.timed("after common-subgraph pruning", res.rules.size(), t0);
}

}  // namespace graphsub::gen
