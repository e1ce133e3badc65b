#include "opt/search/optimize.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <set>

#include "core/error.h"
#include "exec/precompute.h"
#include "ir/hash.h"
#include "ir/process_stats.h"
#include "opt/cost/analytic_cost.h"
#include "opt/cost/machine_profile.h"
#include "opt/cost/measured_cost.h"
#include "opt/search/bisect.h"
#include "opt/transforms/canonical_views.h"

namespace graphsub::opt {

namespace {

using Clock = std::chrono::steady_clock;

// What the bisection found, for the error message: the first bad application and the list.
std::string blame(const SearchResult& s, std::optional<size_t> bad) {
  if (!bad)
    return s.steps.empty()
               ? "no rule was applied: pre-computing the weights broke the outputs"
               : "every application's result passes the check: pre-computing the weights "
                 "broke the outputs";
  std::vector<std::string> all;
  for (size_t i = 0; i < s.steps.size(); ++i)
    all.push_back(fmt::format("{}. {}", i + 1, describe_step(s.steps[i])));
  return fmt::format("the outputs first differ after application {} ({}); applications: {}",
                     *bad + 1, describe_step(s.steps[*bad]), fmt::join(all, "; "));
}

}  // namespace

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
  if (opts.canonical_views) {
    Graph start = g;
    r.views_canonicalized = canonicalize_views(start);
    if (r.views_canonicalized) r.searched_from = std::move(start);
  }
  r.search =
      search(r.searched_from ? *r.searched_from : g, transforms, cost, opts.search, reporter);
  r.peak_rss_mib = process_peak_rss_mib();
  r.initial_cost = r.search.initial_cost;
  r.optimized = r.search.best;
  for (auto& s : r.search.steps) ++r.rules_applied[s.rule];
  if (opts.precompute) r.folded = precompute_weights(r.optimized);
  if (opts.canonical_views) r.reshapes_joined = collapse_reshapes(r.optimized);
  r.optimized.compact();
  validate(r.optimized);
  r.final_cost = cost.graph_cost(r.optimized);
  std::set<uint64_t> distinct = {structural_hash(r.optimized)};
  for (RunnerUp& u : r.search.runners_up) {
    Graph g2 = u.graph;
    if (opts.precompute) precompute_weights(g2);
    if (opts.canonical_views) collapse_reshapes(g2);
    g2.compact();
    validate(g2);
    if (distinct.insert(structural_hash(g2)).second)
      r.runners_up.push_back(RunnerUp{g2, cost.graph_cost(g2)});
  }
  if (opts.check) check_result(g, lib, opts, r, reporter);
  return r;
}

void check_result(const Graph& g, const RuleLibrary& lib, const OptimizeOptions& opts,
                  OptimizeResult& r, Reporter& reporter) {
  auto t = Clock::now();
  reporter.progress("check", 0, 1, "running both graphs on random inputs");
  CheckOptions check{.runs = opts.check_runs,
                     .seed = opts.seed,
                     .tolerance = opts.tolerance,
                     .executor = opts.check_executor};
  r.check = check_equivalent(g, r.optimized, check, reporter);
  r.checked = true;
  r.check_seconds = std::chrono::duration<double>(Clock::now() - t).count();
  if (r.check.ok) return;
  // The bisection replays the applications, one input set per check.
  check.runs = 1;
  try {
    r.first_bad_step = first_bad_application(r.searched_from ? *r.searched_from : g,
                                             lib.transforms(), r.search.steps, check, reporter);
  } catch (const Error&) {  // steps that do not replay: an error, or no single one to blame
    if (opts.mismatch_is_error) throw;
  }
  if (opts.mismatch_is_error)
    throw Error(fmt::format("the optimized graph does not match the original: {}; {}",
                            r.check.failure(), blame(r.search, r.first_bad_step)));
}

}  // namespace graphsub::opt
