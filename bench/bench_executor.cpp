// Executor benchmark. Prints
//  (a) the fast (oneDNN) executor against the reference executor on a ResNet-50-like stack of
//      bottleneck blocks at batch 1 (median run times and their ratio);
//  (b) oneDNN convolution GFLOP/s on representative ResNet-50 conv shapes, against this
//      machine's peak FP32 FMA throughput measured here (single thread and all threads);
//  (c) the cost of copying and structurally hashing a 500-operator graph, and of one cheap
//      edit on the copy (copy-on-write clones one node);
//  (d) the fast executor on every built-in benchmark model at full size.
// Usage: bench_executor [--quick]   (--quick: two stages of the stack, fewer repetitions)
#include <fmt/format.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>

#include "exec/reference_executor.h"
#include "exec_onednn/onednn_executor.h"
#include "graph_flops.h"
#include "ir/builder.h"
#include "ir/hash.h"
#include "ir/parallel.h"
#include "ir/process_stats.h"
#include "models/models.h"

namespace graphsub {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds(const std::function<void()>& f) {
  auto t0 = clock_type::now();
  f();
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double median_seconds(int reps, const std::function<void()>& f) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) t.push_back(seconds(f));
  return median(t);
}

// Wall-clock and process CPU time of f, medians over reps. On a machine shared with other
// busy processes, a single-threaded run's CPU time is its own work while the wall time also
// counts the other processes' turns on the cores.
struct Timing {
  double wall = 0, cpu = 0;
};
Timing median_timing(int reps, const std::function<void()>& f) {
  std::vector<double> wall, cpu;
  for (int i = 0; i < reps; ++i) {
    double c0 = process_cpu_seconds();
    wall.push_back(seconds(f));
    cpu.push_back(process_cpu_seconds() - c0);
  }
  return {median(wall), median(cpu)};
}

// ---------------------------------------------------------------- (a) ResNet-50-like stack

// ResNet-50's body at batch 1 from the 1x64x56x56 stem output: stages of (3,4,6,3) bottleneck
// blocks (1x1, 3x3, 1x1 to 4C, projection shortcut when the shape changes), C = 64..512.
Graph resnet_stack(int stages) {
  GraphBuilder b(true, 50);
  auto x = b.input("x", {1, 64, 56, 56});
  const int64_t blocks[] = {3, 4, 6, 3}, widths[] = {64, 128, 256, 512};
  int64_t in_c = 64;
  for (int s = 0; s < stages; ++s) {
    for (int64_t k = 0; k < blocks[s]; ++k) {
      std::string p = fmt::format("s{}b{}.", s, k);
      int64_t c = widths[s], stride = (s > 0 && k == 0) ? 2 : 1;
      auto h = b.conv(x, b.weight(p + "1", {c, in_c, 1, 1}), {.act = "relu"});
      h = b.conv(h, b.weight(p + "2", {c, c, 3, 3}), {.stride = stride, .pad = 1, .act = "relu"});
      h = b.conv(h, b.weight(p + "3", {4 * c, c, 1, 1}));
      auto shortcut =
          k == 0 ? b.conv(x, b.weight(p + "proj", {4 * c, in_c, 1, 1}), {.stride = stride}) : x;
      x = b.relu(b.ewadd(h, shortcut));
      in_c = 4 * c;
    }
  }
  b.output("y", x);
  return b.finish();
}

using bench::graph_flops;

void bench_stack(bool quick) {
  int stages = quick ? 2 : 4;
  Graph g = resnet_stack(stages);
  auto feeds = random_feeds(g, 1);
  double gflop = graph_flops(g) / 1e9;
  fmt::print("(a) ResNet-50-like stack: {} stages, {} operators, {:.2f} GFLOP per run, batch 1\n",
             stages, g.num_ops(), gflop);
  std::vector<HostTensor<float>> ref_out, fast_out;
  int ref_reps = quick ? 1 : 3, fast_reps = quick ? 10 : 30;
  Timing ref = median_timing(ref_reps, [&] { ref_out = run_reference(g, feeds); });
  fmt::print("    reference executor      {:9.2f} ms wall, {:9.2f} ms CPU  (median of {})\n",
             ref.wall * 1e3, ref.cpu * 1e3, ref_reps);
  int all = hardware_threads();
  for (int threads : {all, 1}) {
    std::unique_ptr<OnednnExecutor> ex;
    double compile = seconds(
        [&] { ex = std::make_unique<OnednnExecutor>(g, OnednnOptions{.threads = threads}); });
    ex->run(feeds);  // warm-up
    Timing fast = median_timing(fast_reps, [&] { fast_out = ex->run(feeds); });
    Difference d = compare(fast_out[0], ref_out[0], {.rtol = 1e-4, .atol = 1e-4});
    fmt::print(
        "    fast executor, {} thr  {:9.2f} ms wall, {:9.2f} ms CPU  (median of {}; compile {:.0f} "
        "ms)\n",
        threads, fast.wall * 1e3, fast.cpu * 1e3, fast_reps, compile * 1e3);
    fmt::print(
        "        {:.1f} GFLOP/s wall; ratio reference/fast {:.1f}x wall{}; outputs agree: {} (max "
        "abs diff {:.1e})\n",
        gflop / fast.wall, ref.wall / fast.wall,
        threads == 1 ? fmt::format(", {:.1f}x CPU", ref.cpu / fast.cpu) : "", d.ok ? "yes" : "NO",
        d.max_abs);
  }
  fmt::print("\n");
}

// ---------------------------------------------------------------- (b) peak and conv GFLOP/s

// Independent accumulators hide the FMA latency; the result is stored so nothing is elided.
constexpr int kAcc = 12;

__attribute__((target("avx2,fma"))) double fma_avx2(int64_t iters) {
  __m256 acc[kAcc];
  for (int i = 0; i < kAcc; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < kAcc; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, c);
  float sink[8], total = 0;
  for (int i = 0; i < kAcc; ++i) {
    _mm256_storeu_ps(sink, acc[i]);
    total += sink[0];
  }
  return total;
}

// Vectors are loaded from arrays: g++ 12's _mm512_set1_ps trips -Wuninitialized.
__attribute__((target("avx512f"))) double fma_avx512(int64_t iters) {
  alignas(64) float lane[16];
  __m512 acc[kAcc];
  for (int i = 0; i < kAcc; ++i) {
    std::fill(lane, lane + 16, static_cast<float>(i));
    acc[i] = _mm512_load_ps(lane);
  }
  std::fill(lane, lane + 16, 0.999999f);
  const __m512 a = _mm512_load_ps(lane);
  std::fill(lane, lane + 16, 1e-7f);
  const __m512 c = _mm512_load_ps(lane);
  for (int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < kAcc; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, c);
  float total = 0;
  for (int i = 0; i < kAcc; ++i) {
    _mm512_store_ps(lane, acc[i]);
    total += lane[0];
  }
  return total;
}

// FP32 FLOP/s of `threads` threads running the kernel at once. Each thread times many short
// bursts and keeps its best: on a machine shared with other busy processes a long loop would
// measure their share of the cores too, while the best short burst is what a core can do.
double peak_flops(double (*kernel)(int64_t), int lanes, int threads, bool quick) {
  const int64_t iters = 100'000;  // ~0.2 ms per burst
  const int bursts = quick ? 50 : 300;
  std::vector<double> best(static_cast<size_t>(threads), 0);
  std::atomic<double> sink{0};
  parallel_for(static_cast<size_t>(threads), threads, [&](size_t i, size_t) {
    for (int b = 0; b < bursts; ++b) {
      double v = 0;
      double t = seconds([&] { v = kernel(iters); });
      best[i] = std::max(best[i], 2.0 * lanes * kAcc * static_cast<double>(iters) / t);
      double cur = sink.load();
      while (!sink.compare_exchange_weak(cur, cur + v)) {
      }
    }
  });
  double total = 0;
  for (double b : best) total += b;
  return total;
}

struct ConvShape {
  const char* what;
  int64_t c, o, hw, k, stride;
};

void bench_convs(bool quick) {
  int threads = hardware_threads();
  bool has512 = __builtin_cpu_supports("avx512f");
  double avx2_1 = peak_flops(fma_avx2, 8, 1, quick),
         avx2_n = peak_flops(fma_avx2, 8, threads, quick);
  double p512_1 = has512 ? peak_flops(fma_avx512, 16, 1, quick) : 0;
  double p512_n = has512 ? peak_flops(fma_avx512, 16, threads, quick) : 0;
  double peak_1 = std::max(avx2_1, p512_1), peak_n = std::max(avx2_n, p512_n);
  fmt::print("(b) peak FP32 FMA throughput (measured, {} hardware threads; oneDNN ISA {}):\n",
             threads, onednn_cpu_isa());
  fmt::print("    AVX2 FMA     1 thread {:7.1f} GFLOP/s   {} threads {:7.1f} GFLOP/s\n",
             avx2_1 / 1e9, threads, avx2_n / 1e9);
  if (has512)
    fmt::print("    AVX-512 FMA  1 thread {:7.1f} GFLOP/s   {} threads {:7.1f} GFLOP/s\n",
               p512_1 / 1e9, threads, p512_n / 1e9);
  fmt::print("    peak used below: {:.1f} GFLOP/s (all threads), {:.1f} GFLOP/s (1 thread)\n",
             peak_n / 1e9, peak_1 / 1e9);

  const ConvShape shapes[] = {
      {"stem 7x7/2 3->64 @224", 3, 64, 224, 7, 2}, {"1x1 64->64 @56", 64, 64, 56, 1, 1},
      {"3x3 64->64 @56", 64, 64, 56, 3, 1},        {"1x1 64->256 @56", 64, 256, 56, 1, 1},
      {"1x1 256->128 @56", 256, 128, 56, 1, 1},    {"3x3 128->128 @28", 128, 128, 28, 3, 1},
      {"1x1 512->128 @28", 512, 128, 28, 1, 1},    {"3x3 256->256 @14", 256, 256, 14, 3, 1},
      {"1x1 1024->256 @14", 1024, 256, 14, 1, 1},  {"3x3 512->512 @7", 512, 512, 7, 3, 1},
      {"1x1 512->2048 @7", 512, 2048, 7, 1, 1},
  };
  fmt::print("    {:<24} {:>7} | {:>9} {:>9} {:>7} | {:>9} {:>9} {:>7}\n", "conv (batch 1)",
             "GFLOP", "1 thr ms", "GFLOP/s", "% peak", fmt::format("{} thr ms", threads), "GFLOP/s",
             "% peak");
  std::vector<double> frac_1, frac_n;
  for (const ConvShape& s : shapes) {
    GraphBuilder b(true, 2);
    auto x = b.input("x", {1, s.c, s.hw, s.hw});
    auto y = b.conv(x, b.weight("w", {s.o, s.c, s.k, s.k}),
                    {.stride = s.stride, .pad = s.k / 2, .act = "relu"});
    b.output("y", y);
    Graph g = b.finish();
    auto feeds = random_feeds(g, 1);
    double gflop = graph_flops(g) / 1e9;
    double ms[2];
    for (int t : {0, 1}) {
      OnednnExecutor ex(g, {.threads = t == 0 ? 1 : threads});
      ex.run(feeds);
      // The convolution primitive alone: the profiling run separates the layout conversions
      // at the graph boundary (row-major input to blocked, blocked output to row-major).
      std::vector<double> times;
      std::vector<NodeTime> nodes;
      for (int i = 0; i < (quick ? 10 : 30); ++i) {
        ex.run(feeds, nodes);
        double sec = 0;
        for (auto& nt : nodes) sec += nt.seconds - nt.conversion_seconds;
        times.push_back(sec);
      }
      ms[t] = median(times) * 1e3;
    }
    frac_1.push_back(gflop / ms[0] * 1e12 / peak_1);
    frac_n.push_back(gflop / ms[1] * 1e12 / peak_n);
    fmt::print("    {:<24} {:>7.3f} | {:>9.3f} {:>9.1f} {:>6.0f}% | {:>9.3f} {:>9.1f} {:>6.0f}%\n",
               s.what, gflop, ms[0], gflop / ms[0] * 1e3, 100 * frac_1.back(), ms[1],
               gflop / ms[1] * 1e3, 100 * frac_n.back());
  }
  fmt::print("    median fraction of peak: {:.0f}% (1 thread), {:.0f}% ({} threads)\n\n",
             100 * median(frac_1), 100 * median(frac_n), threads);
}

// ---------------------------------------------------------------- (c) graph copy and hash

Graph chain_of_ops(int ops) {
  GraphBuilder b(false);
  auto x = b.input("x", {1, 64, 56, 56});
  for (int i = 0; (int)b.graph().num_ops() < ops; ++i) {
    auto h = b.conv(x, b.weight(fmt::format("w{}", i), {64, 64, 3, 3}), {.pad = 1});
    if ((int)b.graph().num_ops() < ops) h = b.relu(h);
    if ((int)b.graph().num_ops() < ops) h = b.ewadd(h, x);
    x = h;
  }
  b.output("y", x);
  return b.finish();
}

void bench_graph_ops(bool quick) {
  Graph g = chain_of_ops(500);
  int reps = quick ? 200 : 2000;
  uint64_t h = 0;
  double copy = median_seconds(reps, [&] {
    Graph c = g;
    h += c.num_slots();
  });
  double hash = median_seconds(quick ? 20 : 200, [&] { h += structural_hash(g); });
  // One edit on each of many fresh copies: copy-on-write clones just the edited node.
  std::vector<Graph> copies(static_cast<size_t>(reps), g);
  NodeId victim = g.topo_order()[g.num_slots() / 2];
  while (g.node(victim).is_source()) ++victim;
  auto inputs = g.node(victim).inputs;
  std::vector<double> edit;
  for (auto& c : copies) edit.push_back(seconds([&] { c.set_inputs(victim, inputs); }));
  fmt::print("(c) graph of {} operators ({} nodes):\n", g.num_ops(), g.num_nodes());
  fmt::print("    copy                 {:9.2f} us  (median of {})\n", copy * 1e6, reps);
  fmt::print("    structural hash      {:9.2f} us  (median of {})\n", hash * 1e6, quick ? 20 : 200);
  fmt::print("    one edit on the copy {:9.3f} us  (median of {}; clones one node)\n",
             median(edit) * 1e6, reps);
  if (h == 42) fmt::print(" ");  // keeps the timed work observable
}

// ---------------------------------------------------------------- (d) built-in models

// The fast executor on every built-in benchmark model at full size (the reference executor
// would take minutes on the larger ones): compile time, first run, median run.
void bench_models(bool quick) {
  int all = hardware_threads();
  fmt::print("(d) fast executor on the built-in models (batch 1), median of {} runs:\n",
             quick ? 3 : 7);
  fmt::print("    {:<14} {:>6} {:>8} {:>11} {:>10} {:>10} {:>12} {:>12}\n", "model", "ops", "GFLOP",
             "compile ms", "first ms", "1 thr ms", "1 thr CPU ms", fmt::format("{} thr ms", all));
  for (const std::string& name : model_names()) {
    Graph g = build_model(name);
    auto feeds = random_feeds(g, 1);
    Timing ms[2];
    double compile = 0, first = 0;
    for (int t : {0, 1}) {
      std::unique_ptr<OnednnExecutor> ex;
      double c = seconds(
          [&] { ex = std::make_unique<OnednnExecutor>(g, OnednnOptions{.threads = t ? all : 1}); });
      double f = seconds([&] { ex->run(feeds); });
      if (t == 0) {
        compile = c;
        first = f;
      }
      ms[t] = median_timing(quick ? 3 : 7, [&] { ex->run(feeds); });
    }
    fmt::print("    {:<14} {:>6} {:>8.2f} {:>11.0f} {:>10.1f} {:>10.2f} {:>12.2f} {:>12.2f}\n",
               name, g.num_ops(), graph_flops(g) / 1e9, compile * 1e3, first * 1e3,
               ms[0].wall * 1e3, ms[0].cpu * 1e3, ms[1].wall * 1e3);
  }
  fmt::print("\n");
}

}  // namespace
}  // namespace graphsub

// The machine's load average: this benchmark shares its cores with whatever else runs.
std::string load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return "unknown";
  char buf[64] = {};
  std::string s = std::fgets(buf, sizeof buf, f) ? buf : "unknown";
  std::fclose(f);
  return s.substr(0, s.find(' '));
}

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  fmt::print("bench_executor{}  (load average at start: {})\n\n", quick ? " --quick" : "",
             load_average());
  graphsub::bench_stack(quick);
  graphsub::bench_convs(quick);
  graphsub::bench_graph_ops(quick);
  fmt::print("\n");
  graphsub::bench_models(quick);
  fmt::print("\nload average at end: {}\n", load_average());
  return 0;
}
