// Lifted rules are proved before the classes: a proven lifted rule implies every class of its
// family, so those classes never reach the prover one by one.
#include "gen/classify/param_lift.h"
#include "gen/prove/prove_classes.h"

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
  // Most general (highest level) first: a proven one implies all its classes.
  for (size_t l = 0; l < lifts.size();) {
    size_t l_end = l;
    while (l_end < lifts.size() && lifts[l_end].level == lifts[l].level) ++l_end;
    rep.progress("prove lifted rules", static_cast<double>(l), static_cast<double>(lifts.size()));
    std::vector<const Equality*> todo, gen_of;
    std::vector<size_t> todo_idx;
    auto covered = [&](const Lift& lf) {
      for (size_t m : lf.members)
        if (classes[m].state == RuleClass::Pending) return false;
      return true;
    };
    for (size_t k = l; k < l_end; ++k)
      if (!covered(lifts[k])) gen_of.push_back(&lifts[k].eq);
    pr.resolve_generalizations(gen_of);
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
        pr.mark(c.eq, true, true);
      }
      if (added) ++counts.valid_lifts;
      return added;
    };
    for (size_t k = l; k < l_end; ++k) {
      if (covered(lifts[k])) continue;
      if (pr.has_valid_generalization(lifts[k].eq)) {
        pr.mark(lifts[k].eq, true, true);
        imply_members(lifts[k]);
        continue;
      }
      todo.push_back(&lifts[k].eq);
      todo_idx.push_back(k);
    }
    std::vector<ProofOutcome> out = pr.prove(todo);
    for (size_t k = 0; k < todo_idx.size(); ++k) {
      if (!out[k].proved) {
        pr.mark(lifts[todo_idx[k]].eq, false, false);
        continue;
      }
      bool adds = imply_members(lifts[todo_idx[k]]) > 0;
      pr.mark(lifts[todo_idx[k]].eq, true, !adds);
    }
    l = l_end;
  }
}

}  // namespace graphsub::gen
