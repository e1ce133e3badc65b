// The classes are proved smallest first, so that by the time a class comes up, its smaller
// common-subgraph generalizations and its more general renaming forms have verdicts: a valid
// one implies it without a proof, a failed one makes its proof pointless (pruning before
// proving, as TASO does).
//
// On several ranks each rank decides its own classes (rule_owner: a skeleton's renaming forms
// lie on one rank, so the `general` links are followed on the rank). What a pass learns of
// other ranks' rules, it learns from the books at the exchanges between the steps of a pass:
// the verdicts (Pruner) and the failed classes (FailBook). A step reads the books as they
// were when it began, in one process too, so the library does not depend on the ranks.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "gen/prove/prove_classes.h"
#include "gen/prove/rank_batches.h"
#include "ir/heap_release.h"
#include "ir/parallel.h"

namespace graphsub::gen {
namespace {

// The root of a failed more general form that settles `c` (up its `general` chain, or among
// its common-subgraph generalizations that are failed classes); null when none.
const RuleKey* failed_general_form(const std::vector<RuleClass>& classes, const RuleClass& c,
                                   Pruner& pr, const FailBook& failed) {
  for (int g = c.general; g >= 0; g = classes[static_cast<size_t>(g)].general)
    if (failure_carries_over(c, classes[static_cast<size_t>(g)]))
      return &classes[static_cast<size_t>(g)].failed_root;
  for (auto& k : pr.generalizations(c.eq)) {
    auto it = failed.find(k);
    if (it != failed.end() && failure_carries_over(c, &it->second)) return &it->second.root;
  }
  return nullptr;
}

// A class not proved as stated (refuted, or the solver gave up) whose candidates all had dense
// convs (kernel reading every input channel) or aligned matmuls is retried under those shape
// conditions: e.g. merging two convs through a concat of kernels holds for dense convs only
// (concat changes a grouped conv's groups), and summing two matmuls as one over concatenated
// operands needs each operand pair's inner sizes to agree, which the solver cannot know
// without the condition. Not only refuted ones: the numeric test samples a few instances and
// may miss the grouped ones that refute it.
// `batch`, `out`: the batch proved and its outcomes (every rank's); `mine[k]`: the class of
// batch item k where it is this rank's, else -1. Reasons are extended where the retry fails.
void retry_under_shape_conditions(std::vector<RuleClass>& classes,
                                  const std::vector<BatchItem>& batch,
                                  const std::vector<long>& mine, std::vector<ProofOutcome>& out,
                                  Pruner& pr, ProofCounts& counts) {
  std::vector<Equality> conditioned;
  std::vector<size_t> retried;  // batch positions of this rank's retried classes
  for (size_t k = 0; k < batch.size(); ++k) {
    if (mine[k] < 0) continue;
    const RuleClass& c = classes[static_cast<size_t>(mine[k])];
    if (out[k].proved || c.shape_conds.empty() || !out[k].retry_under_conditions()) continue;
    Equality ce = c.eq;
    ce.conditions = c.shape_conds;
    canonicalize(ce);
    conditioned.push_back(std::move(ce));
    retried.push_back(k);
  }
  std::vector<BatchItem> items;
  for (auto& ce : conditioned) items.push_back(batch_item(ce, pr.max_vars()));
  std::vector<BatchItem> cond_batch = gather_items(pr.cluster(), std::move(items));
  std::vector<ProofOutcome> cond_out = pr.prove(cond_batch);
  std::unordered_map<std::string, size_t> at;  // this rank's conditioned keys in the batch
  for (size_t j = 0; j < cond_batch.size(); ++j) {
    if (cond_out[j].proved) pr.mark_key(cond_batch[j].key, true, false);
    if (cond_batch[j].eq) at.emplace(cond_batch[j].key, j);
  }
  for (size_t j = 0; j < retried.size(); ++j) {
    RuleClass& c = classes[static_cast<size_t>(mine[retried[j]])];
    const ProofOutcome& o = cond_out[at.at(conditioned[j].key)];
    if (o.proved) {
      c.conditional = true;
      ++counts.conditional;
    } else {
      out[retried[j]].reason += "; under shape conditions: " + o.reason;
    }
  }
}

// One pass over a wave: its most general classes (`instances` false) or their instances.
void prove_wave_pass(std::vector<RuleClass>& classes, const std::vector<size_t>& wave,
                     bool instances, Pruner& pr, FailBook& failed, ProofCounts& counts) {
  std::vector<const Equality*> gen_of;
  std::vector<FailEntry> new_failures;
  for (size_t i : wave) {
    RuleClass& c = classes[i];
    bool instance = c.general >= 0;
    if (instance != instances || c.state != RuleClass::Pending) continue;
    if (instance && general_form_holds(classes, c)) {
      c.state = RuleClass::Implied;
      ++counts.implied;
      pr.defer_mark(c.eq.key, true, true);
      continue;
    }
    if (pr.has_valid_generalization(c.eq)) continue;  // implied below
    // Prune before proving: a more general form that is a class and was not proved.
    if (const RuleKey* root = failed_general_form(classes, c, pr, failed)) {
      skip_for(c, *root);
      ++counts.not_tried;
      pr.defer_mark(c.eq.key, false, false);
      new_failures.push_back({rule_key(c.eq.key), {*root, !c.shape_conds.empty()}});
      continue;
    }
    gen_of.push_back(&c.eq);
  }
  pr.resolve_generalizations(pr.exchange(pr.undecided_generalizations(gen_of)));
  std::vector<BatchItem> todo;
  for (size_t i : wave) {
    RuleClass& c = classes[i];
    if ((c.general >= 0) != instances || c.state != RuleClass::Pending) continue;
    if (pr.has_valid_generalization(c.eq)) {
      c.state = RuleClass::Implied;
      ++counts.implied;
      pr.defer_mark(c.eq.key, true, true);
      continue;
    }
    todo.push_back(batch_item(c.eq, pr.max_vars()));
  }
  pr.exchange();
  // This rank's classes by key, to find them in the batch.
  std::unordered_map<const Equality*, size_t> class_of;
  for (size_t i : wave) class_of.emplace(&classes[i].eq, i);
  std::vector<BatchItem> batch = gather_items(pr.cluster(), std::move(todo));
  std::vector<long> mine(batch.size(), -1);
  for (size_t k = 0; k < batch.size(); ++k)
    if (batch[k].eq) mine[k] = static_cast<long>(class_of.at(batch[k].eq));
  std::vector<ProofOutcome> out = pr.prove(batch);
  retry_under_shape_conditions(classes, batch, mine, out, pr, counts);
  for (size_t k = 0; k < batch.size(); ++k) {
    pr.mark_key(batch[k].key, out[k].proved, false);
    if (mine[k] < 0) continue;
    RuleClass& c = classes[static_cast<size_t>(mine[k])];
    bool proved = out[k].proved || c.conditional;
    c.state = proved ? RuleClass::Proved : RuleClass::Failed;
    c.reason = out[k].reason;
    // A prover verdict (not "not expressible": an instance may be expressible).
    if (!proved && out[k].kind != kNotExpressible && out[k].kind != kTooManyVars) {
      c.has_root = true;
      c.failed_root = rule_key(c.eq.key);
      new_failures.push_back({c.failed_root, {c.failed_root, !c.shape_conds.empty()}});
    }
  }
  exchange_failures(pr.cluster(), new_failures, failed);
  pr.forget_generalizations();
  release_free_memory();  // the batch's terms and the solver's sessions of this pass
}

}  // namespace

void prove_in_waves(std::vector<RuleClass>& classes, int threads, Pruner& pr, FailBook& failed,
                    ProofCounts& counts, Reporter& rep) {
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
  // Every rank runs a pass for every size any rank has (its own wave may be empty).
  std::set<int> all_sizes = union_over_ranks(pr.cluster(), {sizes.begin(), sizes.end()});
  size_t w = 0;
  for (int size : all_sizes) {
    size_t w_end = w;
    while (w_end < order.size() && sizes[order[w_end]] == size) ++w_end;
    std::vector<size_t> wave(order.begin() + static_cast<std::ptrdiff_t>(w),
                             order.begin() + static_cast<std::ptrdiff_t>(w_end));
    rep.progress("prove", static_cast<double>(w), static_cast<double>(order.size()),
                 fmt::format("rules of {} operators", size));
    // Most general classes of the wave first, then their instances.
    prove_wave_pass(classes, wave, false, pr, failed, counts);
    prove_wave_pass(classes, wave, true, pr, failed, counts);
    w = w_end;
  }
}

}  // namespace graphsub::gen
