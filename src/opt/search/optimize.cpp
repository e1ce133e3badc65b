#include "opt/search/optimize.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <set>

#include "core/error.h"
#include "exec/precompute.h"
#include "ir/hash.h"
#include "opt/cost/analytic_cost.h"
#include "opt/cost/machine_profile.h"
#include "opt/cost/measured_cost.h"

namespace graphsub::opt {

namespace {

using Clock = std::chrono::steady_clock;

// Replays the applications one by one and checks each prefix: the first that breaks the
// outputs is named (a binary search over prefixes; the check is the expensive part).
std::string blame(const Graph& original, const std::vector<const Transform*>& transforms,
                  const SearchResult& s, const OptimizeOptions& opts) {
  if (s.steps.empty()) return "no rule was applied: pre-computing the weights broke the outputs";
  auto graphs = replay_steps(original, transforms, s.steps, s.steps.size());
  size_t lo = 0, hi = graphs.size() - 1;  // find the first failing prefix graph
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (check_equivalent(original, graphs[mid], opts.seed, opts.rtol).ok)
      lo = mid + 1;
    else
      hi = mid;
  }
  std::vector<std::string> all;
  for (size_t i = 0; i < s.steps.size(); ++i)
    all.push_back(fmt::format("{}. {} at {}", i + 1, s.steps[i].rule, s.steps[i].where));
  const Step& bad = s.steps[lo];
  return fmt::format("the outputs first differ after application {} ({} at {}); applications: {}",
                     lo + 1, bad.rule, bad.where, fmt::join(all, "; "));
}

}  // namespace

double process_peak_rss_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

std::map<std::string, size_t> op_counts(const Graph& g) {
  std::map<std::string, size_t> c;
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id) && !g.node(id).is_source()) ++c[g.node(id).op->name];
  return c;
}

std::unique_ptr<CostModel> make_cost_model(const OptimizeOptions& opts, Reporter& reporter) {
  std::string dir = opts.cache_dir.empty() ? default_cache_dir() : opts.cache_dir;
  MachineProfile m = cached_machine_profile(dir, opts.threads, reporter);
  if (opts.cost == CostKind::Analytic) return std::make_unique<AnalyticCostModel>(m);
  return std::make_unique<MeasuredCostModel>(dir, m, reporter);
}

OptimizeResult optimize_graph(const Graph& g, const OptimizeOptions& opts, const RuleLibrary& lib,
                              CostModel& cost, Reporter& reporter) {
  validate(g);
  auto transforms = lib.transforms();
  OptimizeResult r;
  r.rules_loaded = transforms.size();
  r.cost_model = cost.name();
  r.assumptions = cost.assumptions();
  r.search = search(g, transforms, cost, opts.search, reporter);
  r.peak_rss_mib = process_peak_rss_mib();
  r.initial_cost = r.search.initial_cost;
  r.optimized = r.search.best;
  for (auto& s : r.search.steps) ++r.rules_applied[s.rule];
  if (opts.precompute) r.folded = precompute_weights(r.optimized);
  r.optimized.compact();
  validate(r.optimized);
  r.final_cost = cost.graph_cost(r.optimized);
  std::set<uint64_t> distinct = {structural_hash(r.optimized)};
  for (RunnerUp& u : r.search.runners_up) {
    Graph g2 = u.graph;
    if (opts.precompute) precompute_weights(g2);
    g2.compact();
    validate(g2);
    if (distinct.insert(structural_hash(g2)).second)
      r.runners_up.push_back(RunnerUp{g2, cost.graph_cost(g2)});
  }
  if (opts.check) {
    auto t = Clock::now();
    reporter.progress("check", 0, 1, "running both graphs on random inputs");
    r.check = check_equivalent(g, r.optimized, opts.seed, opts.rtol);
    r.checked = true;
    r.check_seconds = std::chrono::duration<double>(Clock::now() - t).count();
    if (!r.check.ok)
      throw Error(fmt::format("the optimized graph does not match the original: {}; {}",
                              r.check.detail, blame(g, transforms, r.search, opts)));
  }
  return r;
}

}  // namespace graphsub::opt
