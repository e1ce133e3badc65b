#include "opt/cost/machine_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "exec_onednn/onednn_executor.h"
#include "ir/builder.h"
#include "ir/hash.h"
#include "ir/parallel.h"
#include "ir/process_stats.h"

namespace graphsub::opt {

namespace {

using Clock = std::chrono::steady_clock;

// 2: per-operator overheads from long chains, and the GEMM overhead.
constexpr int kProfileVersion = 2;

// A stopwatch for work done by this thread alone: processor time when one thread does the
// work (steady on a machine shared with other busy processes), wall-clock time otherwise.
class Stopwatch {
 public:
  explicit Stopwatch(bool single_thread) : cpu_(single_thread) { start(); }
  void start() {
    if (cpu_)
      c0_ = process_cpu_seconds();
    else
      w0_ = Clock::now();
  }
  double seconds() const {
    return cpu_ ? process_cpu_seconds() - c0_
                : std::chrono::duration<double>(Clock::now() - w0_).count();
  }

 private:
  bool cpu_;
  double c0_ = 0;
  Clock::time_point w0_{};
};

// Best of `runs` timed runs of the fast executor on g.
double best_run_seconds(const Graph& g, int runs, int threads) {
  OnednnExecutor ex(g, {.threads = threads});
  auto feeds = random_feeds(g, 7);
  ex.run(feeds);
  double best = 1e30;
  Stopwatch w(threads == 1);
  for (int i = 0; i < runs; ++i) {
    w.start();
    ex.run(feeds);
    best = std::min(best, w.seconds());
  }
  return best;
}

double measure_peak_gflops(int threads) {
  const int64_t n = 768;
  GraphBuilder b;
  auto x = b.input("x", {n, n});
  b.output("y", b.matmul(x, b.weight("w", {n, n})));
  double s = best_run_seconds(b.finish(), 10, threads);
  return 2.0 * n * n * n / s / 1e9;
}

double measure_bandwidth_gbs() {
  const size_t n = size_t{32} << 20;  // 128 MiB of floats per buffer
  std::vector<float> a(n, 1.0f), b(n, 0.0f);
  double best = 1e30;
  Stopwatch w(true);  // one thread copies
  for (int i = 0; i < 4; ++i) {
    w.start();
    std::memcpy(b.data(), a.data(), n * sizeof(float));
    best = std::min(best, w.seconds());
    a[i] = b[n - 1 - static_cast<size_t>(i)];  // keep the copies observable
  }
  return 2.0 * static_cast<double>(n * sizeof(float)) / best / 1e9;
}

// Long chains: a real graph runs hundreds of different primitives, whose code and descriptors
// do not all stay in the caches as a short loop's would (64 operators measured 0.18 us per
// operator here, 1000 operators 0.6 us).
double measure_op_overhead_us(int threads) {
  const int chain = 1000;
  GraphBuilder b;
  auto t = b.input("x", {1, 16});
  for (int i = 0; i < chain; ++i) t = i % 2 ? b.relu(t) : b.tanh(t);
  b.output("y", t);
  return best_run_seconds(b.finish(), 20, threads) / chain * 1e6;
}

// A chain of matrix-vector products whose weights (100 MB in all) stream from memory, as a
// recurrent model's do: the time of each beyond streaming its weights at the machine's
// bandwidth is what one GEMM primitive costs. (On the machine this was written on: 4 us per
// 256x256 product, against 0.3 us for a tiny matmul whose weights stay in the caches.)
double measure_gemm_overhead_us(int threads, double bandwidth_gbs) {
  const int64_t n = 256, chain = 384;
  GraphBuilder b;
  auto t = b.input("x", {1, n});
  for (int64_t i = 0; i < chain; ++i)
    t = b.matmul(t, b.weight(fmt::format("w{}", i), {n, n}), "tanh");
  b.output("y", t);
  double per_us = best_run_seconds(b.finish(), 5, threads) / chain * 1e6;
  double stream_us = static_cast<double>(n * n * 4) / (bandwidth_gbs * 1e3);
  return std::max(per_us - stream_us, 0.0);
}

}  // namespace

std::string MachineProfile::str() const {
  return fmt::format(
      "{} ({} threads, {}): {:.1f} GFLOP/s, {:.1f} GB/s, {:.2f} us/op, {:.2f} us/GEMM", cpu,
      threads, isa, peak_gflops, bandwidth_gbs, op_overhead_us, overhead_us(true));
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto p = line.find(':');
      if (p != std::string::npos) {
        auto v = line.substr(p + 1);
        v.erase(0, v.find_first_not_of(' '));
        return v;
      }
    }
  }
  return "unknown CPU";
}

int effective_threads(int threads) {
  if (threads > 0) return threads;
  if (const char* e = std::getenv("OMP_NUM_THREADS"); e && std::atoi(e) > 0) return std::atoi(e);
  return hardware_threads();
}

std::string cpu_tag(int threads) {
  std::string s =
      fmt::format("{}|{}|{}", cpu_model_name(), onednn_cpu_isa(), effective_threads(threads));
  return fmt::format("{:016x}", hash_bytes(s.data(), s.size()));
}

MachineProfile measure_machine(int threads) {
  MachineProfile p;
  p.cpu = cpu_model_name();
  p.isa = onednn_cpu_isa();
  p.threads = effective_threads(threads);
  p.peak_gflops = measure_peak_gflops(p.threads);
  p.bandwidth_gbs = measure_bandwidth_gbs();
  p.op_overhead_us = measure_op_overhead_us(p.threads);
  p.gemm_overhead_us =
      std::max(measure_gemm_overhead_us(p.threads, p.bandwidth_gbs), p.op_overhead_us);
  return p;
}

std::string default_cache_dir() {
  if (const char* d = std::getenv("GRAPHSUB_CACHE_DIR"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/graphsub";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/graphsub";
  return ".graphsub-cache";
}

MachineProfile cached_machine_profile(const std::string& cache_dir, int threads,
                                      Reporter& reporter) {
  namespace fs = std::filesystem;
  fs::path path = fs::path(cache_dir) / fmt::format("machine-{}.json", cpu_tag(threads));
  if (std::ifstream in(path); in) {
    try {
      auto j = nlohmann::json::parse(in);
      MachineProfile p;
      p.cpu = j.at("cpu").get<std::string>();
      p.isa = j.at("isa").get<std::string>();
      p.threads = j.at("threads").get<int>();
      p.peak_gflops = j.at("peak_gflops").get<double>();
      p.bandwidth_gbs = j.at("bandwidth_gbs").get<double>();
      p.op_overhead_us = j.at("op_overhead_us").get<double>();
      p.gemm_overhead_us = j.value("gemm_overhead_us", 0.0);
      // Profiles of an older way of measuring are measured again.
      if (j.value("version", 1) == kProfileVersion && p.peak_gflops > 0 && p.bandwidth_gbs > 0)
        return p;
    } catch (const std::exception&) {
      reporter.warn(fmt::format("ignoring unreadable machine profile {}", path.string()));
    }
  }
  reporter.info("measuring this machine's peak compute, bandwidth and per-operator overhead");
  MachineProfile p = measure_machine(threads);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  nlohmann::json j = {{"version", kProfileVersion},
                      {"cpu", p.cpu},
                      {"isa", p.isa},
                      {"threads", p.threads},
                      {"peak_gflops", p.peak_gflops},
                      {"bandwidth_gbs", p.bandwidth_gbs},
                      {"op_overhead_us", p.op_overhead_us},
                      {"gemm_overhead_us", p.gemm_overhead_us}};
  std::ofstream out(path);
  if (out) out << j.dump(2) << "\n";
  if (!out) reporter.warn(fmt::format("could not write the machine profile to {}", path.string()));
  return p;
}

}  // namespace graphsub::opt
