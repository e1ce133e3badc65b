#pragma once
// Cost-based backtracking search (TASO's Algorithm 2). A queue of graphs ordered by cost; the
// cheapest is expanded by applying every transform at every match; a new graph is queued when
// it is acyclic and cheaper than alpha times the best cost so far. Pricing and admission are
// the search's alone: each application's replacement is first described by the transform's
// applier (transforms/builder.h) and priced (application_price.h), and only applications whose
// price the search admits are built. Graphs are deduplicated by their canonical structural hash
// (src/ir/hash.h) when taken from the queue: one seen before is skipped without counting as
// expanded. (Hashing only the graphs taken out, from their parent's node hashes, keeps the cost
// of the many queued graphs that are never expanded to pricing them.) Stops after `budget`
// expanded graphs, at the time limit, or when the queue runs dry. The queue is bounded: beyond
// max_queue graphs the most expensive are dropped, so memory stays bounded whatever the budget.
// Queued graphs are patches against a shared base graph (GraphPatch), so the queue's memory is
// linear in the graph's size. Ties are broken by the order in which graphs were found, so the
// result is deterministic for a deterministic cost model.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/report.h"
#include "opt/cost/cost_model.h"
#include "opt/transforms/transform.h"

namespace graphsub::opt {

struct SearchOptions {
  double alpha = 1.05;      // keep graphs cheaper than alpha * best (1.0: greedy)
  size_t budget = 1000;     // graphs expanded at most
  double time_limit_s = 0;  // 0: none
  size_t max_queue = 2000;  // graphs kept in the queue at most
  // Distinct graphs returned: the best and up to finalists - 1 runners-up (the cheapest other
  // graphs found, distinct by canonical hash, the input excluded), for a caller that times
  // the few best end to end (the ONNX Runtime latency guard).
  size_t finalists = 1;
};

// A graph the search found, other than the best, and its cost.
struct RunnerUp {
  Graph graph;
  double cost = 0;
};

// One rule application on the way from the input graph to the result. `transform` and
// `ordinal` (the index of its match among those the transform found on the parent graph)
// replay it exactly (replay_steps).
struct Step {
  size_t transform = 0;
  size_t ordinal = 0;
  std::string rule;
  std::string where;
};

struct SearchResult {
  Graph best;
  double initial_cost = 0;
  double best_cost = 0;
  size_t expanded = 0;    // graphs taken from the queue and expanded
  size_t generated = 0;   // applications priced (each asked for admission once)
  size_t kept = 0;        // candidates queued (acyclic, below alpha * best)
  size_t duplicates = 0;  // queued graphs skipped when taken out: seen before
  size_t dropped = 0;     // queued graphs dropped to keep the queue bounded
  size_t peak_queue = 0;
  // Node slots the queued graphs' patches held at most (the queue's memory besides the base
  // graphs it shares): grows with the rewrites, not with the graph's size.
  size_t peak_queued_nodes = 0;
  double seconds = 0;       // wall-clock time
  double cpu_seconds = 0;   // processor time of this process meanwhile (the search is serial:
                            // on a machine shared with other work, this is what it cost)
  std::string stopped_by;   // "budget", "time limit", "exhausted"
  std::vector<Step> steps;  // from the input graph to `best`
  std::vector<RunnerUp> runners_up;  // cheapest first; at most finalists - 1
};

SearchResult search(const Graph& input, const std::vector<const Transform*>& transforms,
                    CostModel& cost, const SearchOptions& opts, Reporter& reporter);

// Re-applies steps[0..count) to `input`, returning the graph after each of them. Throws Error
// when a step does not reproduce (the transforms or the graph differ from the search's).
std::vector<Graph> replay_steps(const Graph& input, const std::vector<const Transform*>& transforms,
                                const std::vector<Step>& steps, size_t count);

}  // namespace graphsub::opt
