#include "opt/cost/runtime.h"

#include <algorithm>
#include <chrono>

#include "exec_onednn/onednn_executor.h"
#include "ir/process_stats.h"

namespace graphsub::opt {

namespace {

using Clock = std::chrono::steady_clock;

RunTime run_once(OnednnExecutor& ex, const TensorMap<float>& feeds) {
  double c = process_cpu_seconds();
  auto s = Clock::now();
  ex.run(feeds);
  RunTime t;
  t.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - s).count();
  t.cpu_ms = 1e3 * (process_cpu_seconds() - c);
  return t;
}

RunTime medians(const std::vector<RunTime>& runs) {
  std::vector<double> w, c;
  for (auto& r : runs) {
    w.push_back(r.wall_ms);
    c.push_back(r.cpu_ms);
  }
  return {median(w), median(c)};
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

RunTime measure_graph(const Graph& g, int runs, int threads) {
  OnednnExecutor ex(g, {.threads = threads});
  auto feeds = random_feeds(g, 11);
  run_once(ex, feeds);
  run_once(ex, feeds);
  std::vector<RunTime> t;
  for (int i = 0; i < runs; ++i) t.push_back(run_once(ex, feeds));
  return medians(t);
}

double measure_graph_ms(const Graph& g, int runs, int threads) {
  return measure_graph(g, runs, threads).wall_ms;
}

PairTiming time_alternated(const Graph& a, const Graph& b, int runs, int threads) {
  OnednnExecutor ea(a, {.threads = threads}), eb(b, {.threads = threads});
  auto fa = random_feeds(a, 11), fb = random_feeds(b, 11);
  for (int i = 0; i < 2; ++i) {
    run_once(ea, fa);
    run_once(eb, fb);
  }
  PairTiming t;
  for (int i = 0; i < runs; ++i) {
    t.a_runs.push_back(run_once(ea, fa));
    t.b_runs.push_back(run_once(eb, fb));
  }
  t.a = medians(t.a_runs);
  t.b = medians(t.b_runs);
  return t;
}

}  // namespace graphsub::opt
