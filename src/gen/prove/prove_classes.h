#pragma once
// The two proving passes of the generator, each pruning before it proves: first the lifted
// rules (one proof settles a whole family of classes that differ in a parameter value), then
// the classes themselves, in waves of equal size, smallest first (a class is implied by a
// proven more general form, or skipped when such a form failed, before it costs a proof).
#include <cstdint>
#include <vector>

#include "gen/prove/pruner.h"
#include "gen/prove/rule_class.h"
#include "gen/space/gen_op.h"
#include "ir/report.h"

namespace graphsub::gen {

struct ProofCounts {
  uint64_t implied = 0;      // classes proved as instances of proven ones (or lifted rules)
  uint64_t not_tried = 0;    // classes not sent to the prover: a more general form failed
  uint64_t conditional = 0;  // classes not proved as stated, proved under shape conditions
  uint64_t valid_lifts = 0;  // proven lifted rules that imply a class no other one implies
};

// Finds the lifts of the most general classes over `lift_domains` (none when empty) and proves
// them, most general first; the classes of a proven one become Implied (by_lift).
void prove_lifted_rules(std::vector<RuleClass>& classes, const ParamDomains& lift_domains,
                        int threads, Pruner& pr, ProofCounts& counts, Reporter& rep);

// Decides every class still Pending, smallest rules first; within a wave of one size, the most
// general classes first, then their instances. A class not proved as stated is retried under
// its shape conditions.
// `failed`: the failed classes of every rank (FailBook), grown as the passes go.
void prove_in_waves(std::vector<RuleClass>& classes, int threads, Pruner& pr, FailBook& failed,
                    ProofCounts& counts, Reporter& rep);

}  // namespace graphsub::gen
