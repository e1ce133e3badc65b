// The classes are proved smallest first, so that by the time a class comes up, its smaller
// common-subgraph generalizations and its more general renaming forms have verdicts: a valid
// one implies it without a proof, a failed one makes its proof pointless (pruning before
// proving, as TASO does).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ir/parallel.h"
#include "gen/prove/prove_classes.h"

namespace graphsub::gen {
namespace {

// The class of a failed more general form that settles `c` (up its `general` chain, or among
// its common-subgraph generalizations that are classes); null when none.
const RuleClass* failed_general_form(const std::vector<RuleClass>& classes, const RuleClass& c,
                                     Pruner& pr,
                                     const std::map<std::string, size_t>& class_of_key) {
  const RuleClass* failed = nullptr;
  for (int g = c.general; g >= 0 && !failed; g = classes[static_cast<size_t>(g)].general)
    if (failure_carries_over(c, classes[static_cast<size_t>(g)]))
      failed = &classes[static_cast<size_t>(g)];
  for (auto& k : pr.generalizations(c.eq)) {
    if (failed) break;
    auto it = class_of_key.find(k);
    if (it != class_of_key.end() && failure_carries_over(c, classes[it->second]))
      failed = &classes[it->second];
  }
  return failed;
}

// A class not proved as stated (refuted, or the solver gave up) whose candidates all had dense
// convs (kernel reading every input channel) or aligned matmuls is retried under those shape
// conditions: e.g. merging two convs through a concat of kernels holds for dense convs only
// (concat changes a grouped conv's groups), and summing two matmuls as one over concatenated
// operands needs each operand pair's inner sizes to agree, which the solver cannot know
// without the condition. Not only refuted ones: the numeric test samples a few instances and
// may miss the grouped ones that refute it.
// `todo_idx`: the classes proved, `out`: their outcomes (reasons extended where the retry
// fails).
void retry_under_shape_conditions(std::vector<RuleClass>& classes,
                                  const std::vector<size_t>& todo_idx,
                                  std::vector<ProofOutcome>& out, Pruner& pr, ProofCounts& counts) {
  std::vector<Equality> conditioned;
  std::vector<size_t> retried;
  for (size_t k = 0; k < todo_idx.size(); ++k) {
    const RuleClass& c = classes[todo_idx[k]];
    if (out[k].proved || c.shape_conds.empty() || !out[k].retry_under_conditions()) continue;
    Equality ce = c.eq;
    ce.conditions = c.shape_conds;
    canonicalize(ce);
    conditioned.push_back(std::move(ce));
    retried.push_back(k);
  }
  std::vector<const Equality*> cond_todo;
  for (auto& ce : conditioned) cond_todo.push_back(&ce);
  std::vector<ProofOutcome> cond_out = pr.prove(cond_todo);
  for (size_t j = 0; j < retried.size(); ++j) {
    RuleClass& c = classes[todo_idx[retried[j]]];
    if (cond_out[j].proved) {
      c.conditional = true;
      ++counts.conditional;
      pr.mark(conditioned[j], true, false);
    } else {
      out[retried[j]].reason += "; under shape conditions: " + cond_out[j].reason;
    }
  }
}

// One pass over a wave: its most general classes (`instances` false) or their instances.
void prove_wave_pass(std::vector<RuleClass>& classes, const std::vector<size_t>& wave,
                     bool instances, Pruner& pr, const std::map<std::string, size_t>& class_of_key,
                     ProofCounts& counts) {
  std::vector<const Equality*> todo;
  std::vector<size_t> todo_idx;
  std::vector<const Equality*> gen_of;
  for (size_t i : wave) {
    RuleClass& c = classes[i];
    bool instance = c.general >= 0;
    if (instance != instances || c.state != RuleClass::Pending) continue;
    if (instance && general_form_holds(classes, c)) {
      c.state = RuleClass::Implied;
      ++counts.implied;
      pr.mark(c.eq, true, true);
      continue;
    }
    if (pr.has_valid_generalization(c.eq)) continue;  // implied below
    // Prune before proving: a more general form that is a class and was not proved.
    if (const RuleClass* failed = failed_general_form(classes, c, pr, class_of_key)) {
      skip_for(c, failed->failed_key, failed->failed_reason);
      ++counts.not_tried;
      pr.mark(c.eq, false, false);
      continue;
    }
    gen_of.push_back(&c.eq);
  }
  pr.resolve_generalizations(gen_of);
  for (size_t i : wave) {
    RuleClass& c = classes[i];
    if ((c.general >= 0) != instances || c.state != RuleClass::Pending) continue;
    if (pr.has_valid_generalization(c.eq)) {
      c.state = RuleClass::Implied;
      ++counts.implied;
      pr.mark(c.eq, true, true);
      continue;
    }
    todo.push_back(&c.eq);
    todo_idx.push_back(i);
  }
  std::vector<ProofOutcome> out = pr.prove(todo);
  retry_under_shape_conditions(classes, todo_idx, out, pr, counts);
  for (size_t k = 0; k < todo_idx.size(); ++k) {
    RuleClass& c = classes[todo_idx[k]];
    bool proved = out[k].proved || c.conditional;
    c.state = proved ? RuleClass::Proved : RuleClass::Failed;
    c.reason = out[k].reason;
    // A prover verdict (not "not expressible": an instance may be expressible).
    if (!proved && out[k].kind != kNotExpressible && out[k].kind != kTooManyVars) {
      c.failed_key = c.eq.key;
      c.failed_reason = c.reason;
    }
    pr.mark(c.eq, out[k].proved, false);
  }
}

}  // namespace

void prove_in_waves(std::vector<RuleClass>& classes, int threads, Pruner& pr, ProofCounts& counts,
                    Reporter& rep) {
  std::map<std::string, size_t> class_of_key;
  for (size_t i = 0; i < classes.size(); ++i) class_of_key.emplace(classes[i].eq.key, i);
  std::vector<size_t> order(classes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<int> sizes(classes.size());
  parallel_for(
      classes.size(), threads,
      [&](size_t i, size_t) {
        sizes[i] = count_ops(classes[i].eq.lhs) + count_ops(classes[i].eq.rhs);
      },
      [&](size_t done) {
        rep.progress("classes", static_cast<double>(done), static_cast<double>(classes.size()));
      });
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sizes[a] < sizes[b]; });
  for (size_t w = 0; w < order.size();) {
    size_t w_end = w;
    while (w_end < order.size() && sizes[order[w_end]] == sizes[order[w]]) ++w_end;
    std::vector<size_t> wave(order.begin() + static_cast<std::ptrdiff_t>(w),
                             order.begin() + static_cast<std::ptrdiff_t>(w_end));
    rep.progress("prove", static_cast<double>(w), static_cast<double>(order.size()),
                 fmt::format("rules of {} operators", sizes[order[w]]));
    // Most general classes of the wave first, then their instances.
    prove_wave_pass(classes, wave, false, pr, class_of_key, counts);
    prove_wave_pass(classes, wave, true, pr, class_of_key, counts);
    w = w_end;
  }
}

}  // namespace graphsub::gen
