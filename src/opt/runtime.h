#pragma once
// End-to-end run times of graphs on the fast (oneDNN) executor: what the optimizer reports as
// measured speedups and what calibrates the measured cost model. Each graph is compiled once;
// timings are medians after warm-up runs.
#include <vector>

#include "ir/graph.h"

namespace graphsub::opt {

// Median milliseconds of `runs` runs (after two warm-up runs), `threads` OpenMP threads.
double measure_graph_ms(const Graph& g, int runs, int threads);

struct PairTiming {
  double a_ms = 0, b_ms = 0;  // medians
  std::vector<double> a, b;   // every run, milliseconds
};
// Runs a and b alternately, `runs` times each, so that machine noise hits both alike.
PairTiming time_alternated(const Graph& a, const Graph& b, int runs, int threads);

double median(std::vector<double> v);

}  // namespace graphsub::opt
