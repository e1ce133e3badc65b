// Where an optimized graph's run time goes, operator by operator, against the original: the
// model is optimized (measured or analytic cost model, the given rule files), then both graphs
// run alternately on the fast executor with per-node timers (one thread). Per operator type:
// node count, the sum over nodes of each node's median time, and the part of it spent on
// layout conversions; beside it, what the cost model predicted for those nodes. Shows which
// rewrites a cost model misjudges (e.g. a merge whose split copies cost more than the
// merged operator saves).
//
//   bench_optimize_profile [--models nasnet_a] [--rules f1,f2] [--no-builtin-rules]
//                          [--cost measured|analytic] [--budget 1000] [--runs 30] [--top 0]
//
// --top N also lists the original graph's N slowest nodes: configuration, how the executor
// runs it, median time and predicted time (which configurations a cost model misprices).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/text.h"
#include "driver/data_paths.h"
#include "exec/host_tensor.h"
#include "exec/precompute.h"
#include "exec_onednn/onednn_executor.h"
#include "ir/report.h"
#include "models/models.h"
#include "opt/cost/runtime.h"
#include "opt/match/graph_index.h"
#include "opt/search/optimize.h"

namespace graphsub {
namespace {

class QuietReporter : public Reporter {
 public:
  void warn(std::string_view line) override { fmt::print(stderr, "warning: {}\n", line); }
};

struct OpRow {
  size_t nodes = 0;
  double ms = 0, conversion_ms = 0, predicted_ms = 0;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Per-node run times of one graph, collected over runs.
struct Profile {
  explicit Profile(const Graph& graph)
      : g(graph), ex(graph, {.threads = 1}), feeds(random_feeds(graph, 5)) {
    secs.resize(g.num_slots());
    conv.resize(g.num_slots());
  }
  void run_once() {
    times.clear();
    ex.run(feeds, times);
    for (auto& t : times) {
      secs[t.node].push_back(t.seconds);
      conv[t.node].push_back(t.conversion_seconds);
    }
  }
  std::map<std::string, OpRow> by_op(opt::CostModel& model) const {
    std::map<std::string, OpRow> rows;
    auto constant = opt::constant_nodes(g);
    for (NodeId id = 0; id < g.num_slots(); ++id) {
      if (!g.alive(id) || g.node(id).is_source()) continue;
      OpRow& r = rows[g.node(id).op->name];
      r.nodes += 1;
      r.ms += median(secs[id]) * 1e3;
      r.conversion_ms += median(conv[id]) * 1e3;
      r.predicted_ms += model.node_cost(g, id, constant) / 1e3;
    }
    return rows;
  }
  // The n nodes with the largest median time: configuration, plan, measured and predicted ms.
  void print_top(opt::CostModel& model, size_t n) const {
    auto constant = opt::constant_nodes(g);
    std::map<NodeId, std::string> how;
    for (auto& p : ex.plan()) how[p.node] = p.how;
    std::vector<std::pair<double, NodeId>> order;
    for (NodeId id = 0; id < g.num_slots(); ++id)
      if (g.alive(id) && !g.node(id).is_source()) order.push_back({median(secs[id]), id});
    std::sort(order.begin(), order.end(), [](auto& a, auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    fmt::print("| node | configuration | executor | ms | predicted ms |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < std::min(n, order.size()); ++i) {
      NodeId id = order[i].second;
      fmt::print("| {} | {} | {} | {:.3f} | {:.3f} |\n", id,
                 opt::config_key(opt::op_config(g, id, constant)), how[id], order[i].first * 1e3,
                 model.node_cost(g, id, constant) / 1e3);
    }
    fmt::print("\n");
  }
  const Graph& g;
  OnednnExecutor ex;
  TensorMap<float> feeds;
  std::vector<NodeTime> times;
  std::vector<std::vector<double>> secs, conv;
};

}  // namespace
}  // namespace graphsub

int main(int argc, char** argv) {
  using namespace graphsub;
  std::vector<std::string> models = {"nasnet_a"};
  opt::OptimizeOptions o;
  opt::RuleLibraryOptions rules;
  o.cost = opt::CostKind::Measured;
  o.check = false;
  int runs = 30;
  size_t top = 0;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--no-builtin-rules") {
      rules.builtin = false;
      continue;
    }
    if (i + 1 >= argc) {
      fmt::print(stderr, "missing value after {}\n", k);
      return 2;
    }
    std::string v = argv[++i];
    if (k == "--models") {
      models = split_list(v);
    } else if (k == "--rules") {
      rules.rule_files = split_list(v);
    } else if (k == "--cost") {
      if (v != "measured" && v != "analytic") {
        fmt::print(stderr, "--cost takes measured or analytic\n");
        return 2;
      }
      o.cost = v == "measured" ? opt::CostKind::Measured : opt::CostKind::Analytic;
    } else if (k == "--budget") {
      o.search.budget = std::stoul(v);
    } else if (k == "--top") {
      top = std::stoul(v);
    } else if (k == "--runs") {
      runs = std::stoi(v);
    } else {
      fmt::print(stderr, "unknown flag {}\n", k);
      return 2;
    }
  }
  try {
    QuietReporter rep;
    opt::RuleLibrary lib(driver::resolved(rules), rep);
    for (auto& name : models) {
      Graph g = build_model(name);
      auto model = opt::make_cost_model(o, rep);
      opt::OptimizeResult r = opt::optimize_graph(g, o, lib, *model, rep);
      precompute_weights(g);  // as the optimized graph's weights are
      std::string rules;
      for (auto& [rule, n] : r.rules_applied)
        rules += fmt::format("{}{} x{}", rules.empty() ? "" : ", ", rule, n);
      Profile a(g), b(r.optimized);
      a.run_once();  // warm-up, not kept
      b.run_once();
      for (auto* p : {&a, &b})
        for (auto& v : p->secs) v.clear();
      for (auto* p : {&a, &b})
        for (auto& v : p->conv) v.clear();
      for (int k = 0; k < runs; ++k) {
        a.run_once();
        b.run_once();
      }
      auto ra = a.by_op(*model), rb = b.by_op(*model);
      fmt::print(
          "## {}: {} cost model, predicted {:+.1f}%; rules applied: {}\n\n"
          "Per operator: nodes, sum of per-node median times over {} alternated runs (of "
          "which layout conversions), predicted time.\n\n"
          "| operator | nodes before | ms before (conversions) | predicted before | nodes after "
          "| ms after (conversions) | predicted after | change ms | predicted change |\n"
          "|---|---|---|---|---|---|---|---|---|\n",
          name, r.cost_model, 100 * (r.final_cost - r.initial_cost) / r.initial_cost,
          rules.empty() ? "none" : rules, runs);
      std::map<std::string, int> ops;
      for (auto& [op, row] : ra) ops[op] = 1;
      for (auto& [op, row] : rb) ops[op] = 1;
      OpRow ta, tb;
      for (auto& [op, one] : ops) {
        OpRow x = ra.count(op) ? ra[op] : OpRow{}, y = rb.count(op) ? rb[op] : OpRow{};
        fmt::print(
            "| {} | {} | {:.3f} ({:.3f}) | {:.3f} | {} | {:.3f} ({:.3f}) | {:.3f} | {:+.3f} | "
            "{:+.3f} |\n",
            op, x.nodes, x.ms, x.conversion_ms, x.predicted_ms, y.nodes, y.ms, y.conversion_ms,
            y.predicted_ms, y.ms - x.ms, y.predicted_ms - x.predicted_ms);
        for (auto [t, s] : {std::pair{&ta, &x}, std::pair{&tb, &y}}) {
          t->nodes += s->nodes;
          t->ms += s->ms;
          t->conversion_ms += s->conversion_ms;
          t->predicted_ms += s->predicted_ms;
        }
      }
      // How the executor runs the optimized graph's data movement (views or copies) and its
      // residual additions (into the residual's buffer, or a copy of it).
      std::map<std::string, size_t> hows;
      for (auto& p : b.ex.plan()) {
        if (p.op == "split" || p.op == "concat") ++hows[p.op + ": " + p.how];
        if (p.op == "conv_add")
          ++hows[p.how.find("sum in place") != std::string::npos ? "conv_add: sum in place"
                                                                 : "conv_add: " + p.how];
      }
      for (auto& [how, n] : hows) fmt::print("{} x{}\n", how, n);
      fmt::print(
          "| all | {} | {:.3f} ({:.3f}) | {:.3f} | {} | {:.3f} ({:.3f}) | {:.3f} | {:+.3f} | "
          "{:+.3f} |\n\n",
          ta.nodes, ta.ms, ta.conversion_ms, ta.predicted_ms, tb.nodes, tb.ms, tb.conversion_ms,
          tb.predicted_ms, tb.ms - ta.ms, tb.predicted_ms - ta.predicted_ms);
      if (top) a.print_top(*model, top);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
