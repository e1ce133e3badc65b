#include "opt/runtime.h"

#include <algorithm>
#include <chrono>

#include "exec_onednn/onednn_executor.h"

namespace graphsub::opt {

namespace {

using Clock = std::chrono::steady_clock;

double run_ms(OnednnExecutor& ex, const TensorMap<float>& feeds) {
  auto s = Clock::now();
  ex.run(feeds);
  return std::chrono::duration<double, std::milli>(Clock::now() - s).count();
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double measure_graph_ms(const Graph& g, int runs, int threads) {
  OnednnExecutor ex(g, {.threads = threads});
  auto feeds = random_feeds(g, 11);
  run_ms(ex, feeds);
  run_ms(ex, feeds);
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) t.push_back(run_ms(ex, feeds));
  return median(t);
}

PairTiming time_alternated(const Graph& a, const Graph& b, int runs, int threads) {
  OnednnExecutor ea(a, {.threads = threads}), eb(b, {.threads = threads});
  auto fa = random_feeds(a, 11), fb = random_feeds(b, 11);
  for (int i = 0; i < 2; ++i) {
    run_ms(ea, fa);
    run_ms(eb, fb);
  }
  PairTiming t;
  for (int i = 0; i < runs; ++i) {
    t.a.push_back(run_ms(ea, fa));
    t.b.push_back(run_ms(eb, fb));
  }
  t.a_ms = median(t.a);
  t.b_ms = median(t.b);
  return t;
}

}  // namespace graphsub::opt
