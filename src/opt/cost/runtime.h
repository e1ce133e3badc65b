#pragma once
// End-to-end run times of graphs on the fast (oneDNN) executor: what the optimizer reports as
// measured speedups and what calibrates the measured cost model. Each graph is compiled once;
// timings are medians after warm-up runs. Both wall-clock and processor time are taken: with
// one executor thread on a machine shared with other busy processes, the processor time of
// the run is the steadier measure of what the graph costs (waiting for a core is not counted).
#include <vector>

#include "ir/graph.h"

namespace graphsub::opt {

struct RunTime {
  double wall_ms = 0;
  double cpu_ms = 0;  // processor time of this process during the run
};

// Medians of `runs` runs (after two warm-up runs), `threads` OpenMP threads.
RunTime measure_graph(const Graph& g, int runs, int threads);
// Median wall-clock milliseconds (measure_graph(...).wall_ms).
double measure_graph_ms(const Graph& g, int runs, int threads);

struct PairTiming {
  RunTime a, b;  // medians
  std::vector<RunTime> a_runs, b_runs;
};
// Runs a and b alternately, `runs` times each, so that machine noise hits both alike.
PairTiming time_alternated(const Graph& a, const Graph& b, int runs, int threads);

double median(std::vector<double> v);

}  // namespace graphsub::opt
