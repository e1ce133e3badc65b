#pragma once
// `graphsub optimize`: shared by the built-in model form (--model NAME) and any other graph
// source (the ONNX form adds an input file): parse the optimizer flags once, optimize a
// Graph, print the summary table.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/report.h"
#include "opt/optimize.h"

namespace graphsub {

struct OptimizeCliOptions {
  opt::OptimizeOptions opt;
  std::string cost = "analytic";  // --cost
  std::string dot_dir;            // --dot: write both graphs as Graphviz files
  int runs = 10;                  // --runs: fast-executor timing runs (0: no timing)
};

// Registers the optimizer flags on `cmd` (all but the graph source).
void add_optimize_flags(CLI::App& cmd, OptimizeCliOptions& o);

// Optimizes `g` (named `what` in the output), prints the summary table on stdout and writes
// the DOT files; returns the result (its graph is the optimized one).
opt::OptimizeResult optimize_and_report(const Graph& g, const std::string& what,
                                        OptimizeCliOptions& o, Reporter& reporter);

}  // namespace graphsub
