// Lifted rules are proved before the classes: a proven lifted rule implies every class of its
// family, so those classes never reach the prover one by one. A lifted rule and its classes
// lie on one rank (rule_owner erases parameter values); the lifted rules of one level go to
// the prover as one batch of every rank's, in key order, as in one process.
#include <map>

#include "gen/classify/param_lift.h"
#include "gen/prove/prove_classes.h"
#include "gen/prove/rank_batches.h"

namespace graphsub::gen {

void prove_lifted_rules(std::vector<RuleClass>& classes, const ParamDomains& lift_domains,
                        int threads, Pruner& pr, ProofCounts& counts, Reporter& rep) {
  std::vector<Lift> lifts;
  if (!lift_domains.empty()) {
    // Most general classes only: renaming instances follow from them.
    std::vector<const Equality*> ceqs;
    std::vector<size_t> which;
    for (size_t i = 0; i < classes.size(); ++i)
      if (classes[i].general < 0) {
        ceqs.push_back(&classes[i].eq);
        which.push_back(i);
      }
    lifts = find_lifts(ceqs, lift_domains, threads, rep);
    for (auto& lf : lifts)
      for (auto& m : lf.members) m = which[m];
  }
  std::set<int> own_levels;
  for (auto& lf : lifts) own_levels.insert(lf.level);
  std::set<int> levels = union_over_ranks(pr.cluster(), own_levels);
  // Most general (highest level) first: a proven one implies all its classes.
  size_t l = 0;
  for (auto level = levels.rbegin(); level != levels.rend(); ++level) {
    size_t l_end = l;
    while (l_end < lifts.size() && lifts[l_end].level == *level) ++l_end;
    rep.progress("prove lifted rules", static_cast<double>(l), static_cast<double>(lifts.size()));
    std::vector<const Equality*> gen_of;
    std::vector<BatchItem> todo;
    auto covered = [&](const Lift& lf) {
      for (size_t m : lf.members)
        if (classes[m].state == RuleClass::Pending) return false;
      return true;
    };
    for (size_t k = l; k < l_end; ++k)
      if (!covered(lifts[k])) gen_of.push_back(&lifts[k].eq);
    pr.resolve_generalizations(pr.exchange(pr.undecided_generalizations(gen_of)));
    // Marks the classes of a valid lifted rule implied; a lifted rule that adds none (its
    // classes were covered by another one) is itself redundant.
    auto imply_members = [&](const Lift& lf) {
      uint64_t added = 0;
      for (size_t m : lf.members) {
        RuleClass& c = classes[m];
        if (c.state != RuleClass::Pending) continue;
        c.state = RuleClass::Implied;
        c.by_lift = true;
        ++counts.implied;
        ++added;
        pr.defer_mark(c.eq.key, true, true);
      }
      if (added) ++counts.valid_lifts;
      return added;
    };
    std::map<std::string, size_t> lift_of;  // this rank's lifted rules sent, by key
    for (size_t k = l; k < l_end; ++k) {
      if (covered(lifts[k])) continue;
      if (pr.has_valid_generalization(lifts[k].eq)) {
        pr.defer_mark(lifts[k].eq.key, true, true);
        imply_members(lifts[k]);
        continue;
      }
      todo.push_back(batch_item(lifts[k].eq, pr.max_vars()));
      lift_of.emplace(lifts[k].eq.key, k);
    }
    std::vector<BatchItem> batch = gather_items(pr.cluster(), std::move(todo));
    std::vector<ProofOutcome> out = pr.prove(batch);
    for (size_t k = 0; k < batch.size(); ++k) {
      if (!batch[k].eq) continue;  // another rank's
      const Lift& lf = lifts[lift_of.at(batch[k].key)];
      if (!out[k].proved) {
        pr.defer_mark(lf.eq.key, false, false);
        continue;
      }
      bool adds = imply_members(lf) > 0;
      pr.defer_mark(lf.eq.key, true, !adds);
    }
    l = l_end;
    pr.forget_generalizations();
  }
  pr.exchange();
}

}  // namespace graphsub::gen
