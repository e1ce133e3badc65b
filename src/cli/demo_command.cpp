// `graphsub demo`: builds the built-in demo network, runs it, prints output shapes and times.
#include <fmt/format.h>

#include <chrono>

#include "cli/commands.h"
#include "exec/reference_executor.h"
#include "ir/print.h"
#include "models/models.h"

namespace graphsub {

void add_demo_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand("demo", "build the built-in demo network, run it, print outputs and run time");
  static bool show_graph = false;
  cmd->add_flag("--print-graph", show_graph, "print the graph as text");
  cmd->callback([&flags] {
    Graph g = demo_model();
    if (show_graph) fmt::print("{}", to_text(g));
    auto feeds = random_feeds(g, 1);
    auto t0 = std::chrono::steady_clock::now();
    auto outs = run_reference(g, feeds);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("demo model: {} operators, {} weights\n", g.num_ops(), g.weights().size());
    for (size_t i = 0; i < outs.size(); ++i)
      fmt::print("output {} shape {}\n", g.outputs()[i].name, shape_str(outs[i].shape));
    fmt::print("reference executor: {:.2f} ms\n", ms);
    (void)flags;
  });
}

}  // namespace graphsub
