// Reference executor speed on the built-in models: wall and process CPU time per run (medians),
// FLOPs from the operators' cost functions, and GFLOP/s over CPU time. The reference kernels
// serve numerical checks of whole models, so they must stay usable at model scale.
//   bench_reference_kernels [--reps N] [model ...]   (default: every benchmark model)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "exec/reference_executor.h"
#include "graph_flops.h"
#include "ir/process_stats.h"
#include "models/models.h"

namespace {

using namespace graphsub;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

using bench::graph_flops;

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else
      names.push_back(a);
  }
  if (names.empty())
    for (auto& n : model_names())
      if (n != "demo") names.push_back(n);
  for (auto& name : names)
    if (std::find(model_names().begin(), model_names().end(), name) == model_names().end()) {
      fmt::print(stderr,
                 "usage: bench_reference_kernels [--reps N] [MODEL ...]\nunknown model '{}'\n",
                 name);
      return 1;
    }
  fmt::print(
      "| model | operators | GFLOP | wall s | CPU s | GFLOP/s (CPU) "
      "|\n|---|---|---|---|---|---|\n");
  for (auto& name : names) {
    Graph g = build_model(name);
    auto feeds = random_feeds(g, 1);
    std::vector<double> wall, cpu;
    for (int r = 0; r < reps; ++r) {
      double c0 = process_cpu_seconds();
      auto t0 = std::chrono::steady_clock::now();
      auto outs = run_reference<float>(g, feeds);
      wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      cpu.push_back(process_cpu_seconds() - c0);
    }
    double gflop = graph_flops(g) / 1e9;
    fmt::print("| {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.1f} |\n", name, g.num_ops(), gflop,
               median(wall), median(cpu), gflop / median(cpu));
    std::fflush(stdout);
  }
}
