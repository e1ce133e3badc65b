// Do merged matmuls pay on the fast executor? For NasRNN and BERT, the graph with its matmuls
// merged by the hand-written merge rules (rules/merges.rules, applied greedily until none
// matches; weights pre-computed in both graphs) is timed against the original, end to end on
// the oneDNN executor: original and merged alternated, medians of --runs runs each, one
// executor thread, processor time (steady on a shared machine) and wall-clock time. The
// analytic and the measured cost model's predictions for both graphs are printed beside the
// times, so their ratios can be compared with the measured one.
//
//   bench_executors_merges [--runs 15] [--models nasrnn,bert] [--cache-dir DIR]
//                          [--rules r1,r2]  (one rule set of any library rules instead)
#include <fmt/format.h>

#include <cstring>
#include <ctime>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/text.h"
#include "driver/data_paths.h"
#include "exec/precompute.h"
#include "ir/report.h"
#include "models/models.h"
#include "opt/cost/analytic_cost.h"
#include "opt/cost/machine_profile.h"
#include "opt/cost/measured_cost.h"
#include "opt/cost/runtime.h"
#include "opt/match/graph_hashing.h"
#include "opt/search/optimize.h"
#include "opt/transforms/rule_library.h"

namespace graphsub {
namespace {

class QuietReporter : public Reporter {
 public:
  void warn(std::string_view line) override { fmt::print(stderr, "warning: {}\n", line); }
};

// Applies the named transform at its first match until it no longer matches (at most `cap`
// times); returns the number of applications.
size_t apply_to_fixpoint(Graph& g, const opt::Transform& t, size_t cap = 1000) {
  size_t applied = 0;
  std::vector<NodeId> order;
  while (applied < cap) {
    std::optional<Graph> next;
    {
      opt::GraphIndex ix(g);  // reads g: the candidate replaces it only after the match
      opt::apply_everywhere(t, ix, [&](opt::Candidate&& c) {
        if (!next && opt::topological_order(c.graph, order)) next = std::move(c.graph);
      });
    }
    if (!next) break;
    g = std::move(*next);
    ++applied;
  }
  return applied;
}

const opt::Transform& find_transform(const opt::RuleLibrary& lib, const std::string& name) {
  for (auto* t : lib.transforms())
    if (t->name() == name) return *t;
  throw Error("no rule named " + name);
}

std::string op_summary(const Graph& g) {
  std::string s;
  for (auto& [op, n] : opt::op_counts(g)) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", n, op);
  return s;
}

}  // namespace
}  // namespace graphsub

int main(int argc, char** argv) {
  using namespace graphsub;
  int runs = 15;
  std::vector<std::string> models = {"nasrnn", "bert"};
  std::string cache;
  std::vector<std::string> only_rules;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (i + 1 >= argc) {
      fmt::print(stderr, "missing value after {}\n", k);
      return 2;
    }
    std::string v = argv[++i];
    if (k == "--runs") {
      runs = std::stoi(v);
    } else if (k == "--models") {
      models = split_list(v);
    } else if (k == "--rules") {
      only_rules = split_list(v);
    } else if (k == "--cache-dir") {
      cache = v;
    } else {
      fmt::print(stderr, "unknown flag {}\n", k);
      return 2;
    }
  }
  try {
    QuietReporter rep;
    if (cache.empty()) cache = opt::default_cache_dir();
    opt::MachineProfile m = opt::cached_machine_profile(cache, 1, rep);
    opt::AnalyticCostModel analytic(m);
    opt::MeasuredCostModel measured(cache, m, rep);
    opt::RuleLibrary lib(driver::resolved({}), rep);  // the shipped library
    std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    fmt::print("# bench_executors_merges, {}\n\nmachine: {}\nmeasured model: {}\n\n", date, m.str(),
               measured.assumptions());
    fmt::print(
        "| model | rule applications | ops before | ops after | analytic after/before | "
        "measured after/before | run before, CPU ms (wall) | run after, CPU ms (wall) | "
        "speedup CPU (wall) |\n|---|---|---|---|---|---|---|---|---|\n");
    // Sums of two matmuls (NasRNN's x*W1 + h*W2), matmuls sharing a left operand, and both in
    // that order.
    std::vector<std::vector<std::string>> rule_sets = {
        {"merge-matmul-sum"},
        {"merge-matmuls-shared-left"},
        {"merge-matmul-sum", "merge-matmuls-shared-left"}};
    if (!only_rules.empty()) rule_sets = {only_rules};
    for (auto& name : models) {
      Graph g = build_model(name);
      precompute_weights(g);
      std::set<std::string> seen;
      for (auto& rules : rule_sets) {
        Graph merged = g;
        std::string applied;
        for (auto& rule : rules) {
          size_t n = apply_to_fixpoint(merged, find_transform(lib, rule));
          if (n) applied += fmt::format("{}{} x{}", applied.empty() ? "" : ", ", rule, n);
        }
        if (applied.empty() || !seen.insert(applied).second) continue;  // nothing new
        precompute_weights(merged);
        double a0 = analytic.graph_cost(g), a1 = analytic.graph_cost(merged);
        double m0 = measured.graph_cost(g), m1 = measured.graph_cost(merged);
        auto t = opt::time_alternated(g, merged, runs, 1);
        fmt::print(
            "| {} | {} | {} | {} | {:.3f} | {:.3f} | {:.3f} ({:.3f}) | {:.3f} ({:.3f}) | "
            "{:.3f}x ({:.3f}x) |\n",
            name, applied, g.num_ops(), merged.num_ops(), a1 / a0, m1 / m0, t.a.cpu_ms, t.a.wall_ms,
            t.b.cpu_ms, t.b.wall_ms, t.a.cpu_ms / t.b.cpu_ms, t.a.wall_ms / t.b.wall_ms);
        fmt::print(stderr, "{} merged: {}\n", name, op_summary(merged));
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
