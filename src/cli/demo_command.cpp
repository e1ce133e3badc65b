// `graphsub demo`: builds the built-in demo network, runs it on the reference executor and on
// the fast oneDNN executor, prints output shapes, both run times and their largest difference.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "cli/commands.h"
#include "driver/rule_jobs.h"
#include "exec/reference_executor.h"
#include "exec_onednn/onednn_executor.h"
#include "ir/print.h"
#include "models/models.h"

namespace graphsub {

namespace {

template <class F>
double millis(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void add_demo_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand(
      "demo", "build the built-in demo network, run it, print outputs and run time");
  struct DemoOptions {
    bool show_graph = false;
    int runs = 10;
    int threads = 0;
  };
  auto o = std::make_shared<DemoOptions>();
  cmd->add_flag("--print-graph", o->show_graph, "print the graph as text");
  cmd->add_option("--runs", o->runs, "timed runs of the fast executor (the median is printed)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--threads", o->threads, "oneDNN threads (0: OpenMP default, all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([o, &flags] {
    driver::check_threads("--threads", o->threads);
    const bool show_graph = o->show_graph;
    const int runs = o->runs, threads = o->threads;
    Graph g = demo_model();
    if (show_graph) fmt::print("{}", to_text(g));
    auto feeds = random_feeds(g, 1);
    std::vector<HostTensor<float>> outs, fast_outs;
    double ref_ms = millis([&] { outs = run_reference(g, feeds); });
    std::unique_ptr<OnednnExecutor> fast;
    double compile_ms = millis(
        [&] { fast = std::make_unique<OnednnExecutor>(g, OnednnOptions{.threads = threads}); });
    fast_outs = fast->run(feeds);  // warm-up: first-touch of buffers, JIT caches
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) times.push_back(millis([&] { fast_outs = fast->run(feeds); }));
    std::sort(times.begin(), times.end());
    double fast_ms = times[times.size() / 2];

    fmt::print("demo model: {} operators, {} weights\n", g.num_ops(), g.weights().size());
    double max_diff = 0;
    for (size_t i = 0; i < outs.size(); ++i) {
      fmt::print("output {} shape {}\n", g.outputs()[i].name, shape_str(outs[i].shape));
      max_diff = std::max(max_diff, compare(fast_outs[i], outs[i], {.rtol = 0, .atol = 0}).max_abs);
    }
    fmt::print("reference executor: {:.2f} ms\n", ref_ms);
    fmt::print("fast executor (oneDNN, {}): {:.3f} ms (median of {} runs; compile {:.1f} ms)\n",
               onednn_cpu_isa(), fast_ms, runs, compile_ms);
    fmt::print("speedup: {:.1f}x, max abs difference {:.2e}\n", ref_ms / fast_ms, max_diff);
    (void)flags;
  });
}

}  // namespace graphsub
