// The library keeps only what nothing more general already states; the three counts show how
// much each kind of generality (renaming, parameter, common subgraph) removed.
#include "gen/stages.h"

namespace graphsub::gen {

void prune_stage(const std::vector<RuleClass>& classes, const ProofCounts& counts, const Pruner& pr,
                 GeneratorResult& res, StageLog& log) {
  // Renaming: one most general form per class.
  auto t0 = Clock::now();
  uint64_t after_renaming = 0;
  for (auto& c : classes)
    if (c.state != RuleClass::Failed) after_renaming += !general_form_holds(classes, c);
  log.timed("after renaming", after_renaming, t0);
  // Parameter lifting: the classes a proven lifted rule covers are instances of it.
  t0 = Clock::now();
  uint64_t after_lifting = 0;
  for (auto& c : classes)
    if (c.state != RuleClass::Failed)
      after_lifting += !general_form_holds(classes, c) && !c.by_lift;
  after_lifting += counts.valid_lifts;
  log.timed("after parameter lifting", after_lifting, t0);
  // Common-subgraph pruning: the valid rules that nothing more general covers.
  t0 = Clock::now();
  res.rules = pr.irredundant();
  res.generalized = pr.generalizations_kept();
  res.lifted = lifted_count(res.rules);
  log.timed("after common-subgraph pruning", res.rules.size(), t0);
}

}  // namespace graphsub::gen
