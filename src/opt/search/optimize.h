#pragma once
// The optimizer's entry point, shared by `graphsub optimize --model NAME` and the ONNX form:
// search for a cheaper equivalent graph, pre-compute the weight expressions, and check the
// result against the original on random inputs before reporting success.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check/equivalence.h"
#include "ir/graph.h"
#include "ir/report.h"
#include "opt/cost/cost_model.h"
#include "opt/search/search.h"
#include "opt/transforms/rule_library.h"

namespace graphsub::opt {

enum class CostKind { Analytic, Measured };

struct OptimizeOptions {
  SearchOptions search;
  CostKind cost = CostKind::Analytic;
  std::string cache_dir;  // "": default_cache_dir()
  // OpenMP threads of the fast executor when measuring (0: all cores). On a machine shared
  // with other busy processes, 1 gives far steadier timings.
  int threads = 1;
  bool precompute = true;  // fold weight expressions into weights
  bool check = true;       // equivalence check of the result (check/equivalence.h)
  Tolerance tolerance;     // of that check (--rtol, --atol)
  uint64_t seed = 1;       // random inputs of the check
  int check_runs = 1;      // random input sets of the check
  CheckExecutor check_executor = CheckExecutor::Reference;
  // A result that fails the check: an Error (the message names the first bad application),
  // or, false, returned with check.ok false and first_bad_step set, for a caller that
  // reports the failure itself (the ONNX job writes nothing and says why).
  bool mismatch_is_error = true;
  // Chains of reshapes and transposes outside the rule language written in it before the
  // search, and reshapes that follow each other joined after it (opt/transforms/
  // canonical_views.h). Set where fused operators are allowed: their rules read such chains.
  bool canonical_views = false;
};

struct OptimizeResult {
  Graph optimized;
  SearchResult search;
  std::string cost_model;   // "analytic" / "measured"
  std::string assumptions;  // the machine and parameters the cost model assumed
  double initial_cost = 0;  // microseconds predicted
  double final_cost = 0;
  // With search.finalists > 1: the search's next-best distinct graphs, weights pre-computed as
  // for `optimized` (any that then equal `optimized` or an earlier one dropped), cheapest first.
  std::vector<RunnerUp> runners_up;
  size_t folded = 0;                            // operators pre-computed into weights
  std::map<std::string, size_t> rules_applied;  // rule -> applications on the way to the result
  size_t rules_loaded = 0;
  double peak_rss_mib = 0;  // process peak resident memory after the search (Linux; else 0)
  bool checked = false;
  ResultCheck check;
  double check_seconds = 0;
  // When the check failed: the first step of search.steps after which the outputs differ
  // (nullopt when no single application is to blame).
  std::optional<size_t> first_bad_step;
  // The graph the search started from where it is not the input (canonical_views rewrote
  // some chains): the applications replay on it.
  std::optional<Graph> searched_from;
  size_t views_canonicalized = 0;  // chains rewritten before the search
  size_t reshapes_joined = 0;      // reshapes gone after it
};

// Builds the cost model the options ask for (measuring the machine on first use).
std::unique_ptr<CostModel> make_cost_model(const OptimizeOptions& opts, Reporter& reporter);

// Searches with the transforms of `lib`, which the caller loads once (src/driver: before the
// long run, and used again to find a bad rewrite). Throws Error when the input graph is
// invalid, and (opts.mismatch_is_error) when the optimized graph fails the numerical check:
// the message names the first rule application after which the outputs differ (found by
// replaying the applications).
OptimizeResult optimize_graph(const Graph& g, const OptimizeOptions& opts, const RuleLibrary& lib,
                              CostModel& cost, Reporter& reporter);

// The check of optimize_graph's result against `g` (its opts.check step), for a caller that
// searched with opts.check false and checks only the graph it will write (the ONNX job
// times candidates first: most runs write the input, which needs no check). Fills r.check,
// r.checked, r.check_seconds and, on a mismatch, r.first_bad_step; throws as optimize_graph.
void check_result(const Graph& g, const RuleLibrary& lib, const OptimizeOptions& opts,
                  OptimizeResult& r, Reporter& reporter);

// Operator counts by operator name (source nodes excluded).
std::map<std::string, size_t> op_counts(const Graph& g);

}  // namespace graphsub::opt
