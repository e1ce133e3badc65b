#include "opt/machine_profile.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "exec_onednn/onednn_executor.h"
#include "ir/builder.h"
#include "ir/hash.h"

namespace graphsub::opt {

namespace {

using Clock = std::chrono::steady_clock;

// A stopwatch for work done by this thread alone: processor time when one thread does the
// work (steady on a machine shared with other busy processes), wall-clock time otherwise.
class Stopwatch {
 public:
  explicit Stopwatch(bool single_thread) : cpu_(single_thread) { start(); }
  void start() {
    if (cpu_)
      c0_ = cpu_seconds();
    else
      w0_ = Clock::now();
  }
  double seconds() const {
    return cpu_ ? cpu_seconds() - c0_ : std::chrono::duration<double>(Clock::now() - w0_).count();
  }

 private:
  static double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  }
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

double measure_op_overhead_us(int threads) {
  const int chain = 64;
  GraphBuilder b;
  auto t = b.input("x", {1, 16});
  for (int i = 0; i < chain; ++i) t = i % 2 ? b.relu(t) : b.tanh(t);
  b.output("y", t);
  return best_run_seconds(b.finish(), 50, threads) / chain * 1e6;
}

}  // namespace

std::string MachineProfile::str() const {
  return fmt::format("{} ({} threads, {}): {:.1f} GFLOP/s, {:.1f} GB/s, {:.2f} us/op", cpu, threads,
                     isa, peak_gflops, bandwidth_gbs, op_overhead_us);
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
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
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
      if (p.peak_gflops > 0 && p.bandwidth_gbs > 0) return p;
    } catch (const std::exception&) {
      reporter.warn(fmt::format("ignoring unreadable machine profile {}", path.string()));
    }
  }
  reporter.info("measuring this machine's peak compute, bandwidth and per-operator overhead");
  MachineProfile p = measure_machine(threads);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  nlohmann::json j = {{"cpu", p.cpu},
                      {"isa", p.isa},
                      {"threads", p.threads},
                      {"peak_gflops", p.peak_gflops},
                      {"bandwidth_gbs", p.bandwidth_gbs},
                      {"op_overhead_us", p.op_overhead_us}};
  std::ofstream out(path);
  if (out) out << j.dump(2) << "\n";
  if (!out) reporter.warn(fmt::format("could not write the machine profile to {}", path.string()));
  return p;
}

}  // namespace graphsub::opt
