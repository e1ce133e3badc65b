// Proving is the stage that costs the most (the prover's calls); its counts say how many
// calls pruning saved (implied, not tried) and its times which verdicts took them.
#include <algorithm>
#include <unordered_map>

#include "core/error.h"
#include "gen/prove/rank_batches.h"
#include "gen/shard_files.h"
#include "gen/stages.h"
#include "ir/heap_release.h"
#include "ir/process_stats.h"

namespace graphsub::gen {

ProofCounts prove_stage(std::vector<RuleClass>& classes, const GeneratorOptions& opts, Pruner& pr,
                        GeneratorResult& res, StageLog& log, Reporter& rep) {
  // A class needs no proof of its own when it is a renaming instance of a proven class, or
  // when one of its common-subgraph generalizations holds (it is then also redundant).
  auto t0 = Clock::now();
  for (auto& c : classes) pr.note_class(c.eq.key);
  ProofCounts counts;
  FailBook failed;
  prove_lifted_rules(classes, opts.lift_domains, opts.threads, pr, counts, rep);
  prove_in_waves(classes, opts.threads, pr, failed, counts, rep);
  failed = FailBook{};
  uint64_t proved_pairs = 0;
  for (auto& c : classes)
    if (c.state == RuleClass::Proved || c.state == RuleClass::Implied) proved_pairs += c.pairs;
  std::vector<uint64_t> sum = sum_over_ranks(
      pr.cluster(),
      {counts.implied, counts.not_tried, counts.conditional, counts.valid_lifts, proved_pairs});
  counts = {sum[0], sum[1], sum[2], sum[3]};
  res.implied = counts.implied;
  res.not_tried = counts.not_tried;
  res.conditional = counts.conditional;
  log.timed("proved", sum[4], t0);
  rep.info(fmt::format("  (peak memory so far {:.0f} MiB)", process_peak_rss_mib()));
  res.prover_times = pr.times();
  res.generalization_calls = pr.generalization_calls();
  res.too_many_vars = pr.too_many_vars();
  if (res.too_many_vars)
    rep.info(fmt::format("  ({} rules not sent to the prover: more than {} tensor variables)",
                         res.too_many_vars, opts.max_prover_vars));
  return counts;
}

void unproved_stage(std::vector<RuleClass> classes, Cluster& cluster, GeneratorResult& res) {
  // This rank's failed classes, compactly, and the classes freed before every rank's arrive.
  ByteWriter w;
  uint64_t n = 0;
  for (const RuleClass& c : classes) n += c.state == RuleClass::Failed;
  w.put(n);
  for (const RuleClass& c : classes) {
    if (c.state != RuleClass::Failed) continue;
    w.put_string(c.eq.key);
    w.put_string(c.reason);
    w.put(c.pairs);
    w.put(c.reduced);
    w.put<uint8_t>(c.not_tried);
    w.put(c.failed_root);
  }
  classes = std::vector<RuleClass>{};
  release_free_memory();
  struct Failed {
    UnprovedRule u;
    bool not_tried;
    RuleKey root;
  };
  std::vector<Failed> all;
  std::vector<std::string> got = cluster.all_gather(w.bytes());
  std::string().swap(w.bytes());
  for (std::string& bytes : got) {
    ByteReader in(bytes, "a rank's unproved classes");
    for (uint64_t k = in.get<uint64_t>(); k > 0; --k) {
      Failed f;
      f.u.key = in.get_string();
      f.u.reason = in.get_string();
      f.u.pairs = in.get<uint64_t>();
      f.u.reduced = in.get<uint64_t>();
      f.not_tried = in.get<uint8_t>() != 0;
      f.root = in.get<RuleKey>();
      all.push_back(std::move(f));
    }
    std::string().swap(bytes);  // read: freed before the next rank's are
  }
  std::sort(all.begin(), all.end(),
            [](const Failed& a, const Failed& b) { return a.u.key < b.u.key; });
  // A class not tried names the failed form that settled it and that form's reason.
  std::unordered_map<RuleKey, size_t, RuleKeyHash> tried;
  for (size_t i = 0; i < all.size(); ++i)
    if (!all[i].not_tried) tried.emplace(rule_key(all[i].u.key), i);
  res.unproved.clear();
  res.unproved.reserve(all.size());
  for (Failed& f : all) {
    if (f.not_tried) {
      auto r = tried.find(f.root);
      if (r == tried.end())
        throw Error("a class not tried names a failed form that no rank reported: " + f.u.key);
      const UnprovedRule& root = all[r->second].u;
      f.u.reason = fmt::format("not tried: its more general form {} was not proved ({})", root.key,
                               root.reason);
    }
  }
  for (Failed& f : all) res.unproved.push_back(std::move(f.u));
}

}  // namespace graphsub::gen
