// Optimizer benchmark. For every built-in benchmark model:
//  (1) the cost model against reality: candidate graphs sampled by random rewrites of the
//      model (the kind of graphs a search compares), each priced by the measured cost model
//      and run end to end on the fast executor. A calibration (per-operator overhead and
//      memory traffic, see src/opt/cost/calibration.h) is fitted on all samples; per model it
//      reports the rank correlation of predicted and measured times and the median relative
//      error, uncalibrated and calibrated (the latter leave-one-model-out: the model's own
//      samples are not used to fit the calibration that predicts them);
//  (2) the optimization itself with the calibrated measured model: operators, cost before and
//      after, end-to-end time before and after on the fast executor (original and optimized
//      alternated, median of --runs runs), graphs expanded, search time, peak memory, and the
//      numerical check of the result.
//
//   bench_optimize [--models a,b] [--budget 1000] [--alpha 1.05] [--runs 10] [--samples 8]
//                  [--threads 1] [--cache-dir DIR] [--skip-calibration]
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/text.h"
#include "driver/candidate_samples.h"
#include "driver/data_paths.h"
#include "ir/process_stats.h"
#include "ir/report.h"
#include "models/models.h"
#include "opt/cost/calibration.h"
#include "opt/cost/machine_profile.h"
#include "opt/cost/measured_cost.h"
#include "opt/cost/runtime.h"
#include "opt/match/graph_hashing.h"
#include "opt/match/graph_index.h"
#include "opt/search/optimize.h"

namespace graphsub {
namespace {

struct Args {
  std::vector<std::string> models;
  size_t budget = 1000;
  double alpha = 1.05;
  int runs = 10;
  int samples = 8;
  int threads = 1;
  std::string cache_dir;
  bool calibrate = true;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value after " + k);
      return argv[++i];
    };
    if (k == "--models") {
      for (auto& m : split_list(next())) a.models.push_back(m);
    } else if (k == "--budget") {
      a.budget = std::stoul(next());
    } else if (k == "--alpha") {
      a.alpha = std::stod(next());
    } else if (k == "--runs") {
      a.runs = std::stoi(next());
    } else if (k == "--samples") {
      a.samples = std::stoi(next());
    } else if (k == "--threads") {
      a.threads = std::stoi(next());
    } else if (k == "--cache-dir") {
      a.cache_dir = next();
    } else if (k == "--skip-calibration") {
      a.calibrate = false;
    } else {
      throw std::runtime_error("unknown flag " + k);
    }
  }
  if (a.models.empty())
    for (auto& m : model_names())
      if (m != "demo") a.models.push_back(m);
  return a;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string s;
  in >> s;
  return s.empty() ? "unknown" : s;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

using driver::random_rewrite;  // seeded: the samples are the same on every run

struct Sample {
  std::string model;
  opt::CalibrationFeatures f;
  double measured_us = 0;
};

// Median end-to-end processor time in microseconds (steadier than wall-clock time on a
// shared machine with one executor thread), with fewer runs for graphs that take long.
double measure_us(const Graph& g, int threads) {
  double first = opt::measure_graph(g, 1, threads).cpu_ms;
  int runs = first > 500 ? 3 : first > 50 ? 5 : 9;
  return opt::measure_graph(g, runs, threads).cpu_ms * 1e3;
}

double median_abs_rel(const std::vector<double>& pred, const std::vector<double>& meas) {
  std::vector<double> e;
  for (size_t i = 0; i < pred.size(); ++i) e.push_back(std::fabs(pred[i] - meas[i]) / meas[i]);
  return opt::median(e);
}

void calibrate(const Args& a, opt::MeasuredCostModel& model,
               const std::vector<const opt::Transform*>& transforms) {
  fmt::print("## (1) cost model against end-to-end runs\n\n");
  fmt::print(
      "{} sampled graphs per model (the model and random rewrites of 1 to 6 steps), each "
      "run end to end on the fast executor ({} thread(s)).\n\n",
      a.samples, a.threads);
  std::vector<Sample> samples;
  std::mt19937_64 rng(2024);
  for (auto& name : a.models) {
    Graph g = build_model(name);
    auto t = std::chrono::steady_clock::now();
    for (int i = 0; i < a.samples; ++i) {
      Graph s = i == 0 ? g : random_rewrite(g, transforms, 1 + static_cast<int>(rng() % 6), rng);
      samples.push_back({name, model.features(s), measure_us(s, a.threads)});
    }
    fmt::print("  sampled {:<13} in {:6.1f} s\n", name, seconds_since(t));
    std::fflush(stdout);
  }
  model.save();
  std::vector<opt::CalibrationSample> all;
  for (auto& s : samples) all.push_back({s.f, s.measured_us});
  opt::Calibration cal = opt::fit_calibration(all);
  fmt::print("\nfit on all {} samples: {}\n\n", all.size(), cal.str());

  fmt::print(
      "| model | samples | measured ms (min-max) | sum of isolated op times / measured | "
      "rank corr. uncalibrated | rank corr. calibrated | median error uncalibrated | "
      "median error calibrated (leave-one-model-out) |\n");
  fmt::print("|---|---|---|---|---|---|---|---|\n");
  std::vector<double> all_pred, all_meas, all_raw;
  for (auto& name : a.models) {
    std::vector<opt::CalibrationSample> others;
    std::vector<double> raw, meas, pred_all;
    for (auto& s : samples) {
      if (s.model == name) {
        raw.push_back(s.f.isolated_us);
        meas.push_back(s.measured_us);
        pred_all.push_back(cal.predict(s.f));
      } else {
        others.push_back({s.f, s.measured_us});
      }
    }
    opt::Calibration held_out = opt::fit_calibration(others);
    std::vector<double> pred;
    for (auto& s : samples)
      if (s.model == name) pred.push_back(held_out.predict(s.f));
    double lo = *std::min_element(meas.begin(), meas.end()),
           hi = *std::max_element(meas.begin(), meas.end());
    double ratio = opt::median([&] {
      std::vector<double> r;
      for (size_t i = 0; i < raw.size(); ++i) r.push_back(raw[i] / meas[i]);
      return r;
    }());
    fmt::print("| {} | {} | {:.2f}-{:.2f} | {:.2f} | {:+.2f} | {:+.2f} | {:.0f}% | {:.0f}% |\n",
               name, meas.size(), lo / 1e3, hi / 1e3, ratio, opt::rank_correlation(raw, meas),
               opt::rank_correlation(pred_all, meas), 100 * median_abs_rel(raw, meas),
               100 * median_abs_rel(pred, meas));
    all_pred.insert(all_pred.end(), pred_all.begin(), pred_all.end());
    all_meas.insert(all_meas.end(), meas.begin(), meas.end());
    all_raw.insert(all_raw.end(), raw.begin(), raw.end());
  }
  fmt::print(
      "\nacross all models: rank correlation {:+.3f} uncalibrated, {:+.3f} calibrated; "
      "median error {:.0f}% uncalibrated, {:.0f}% calibrated (fitted on these samples)\n\n",
      opt::rank_correlation(all_raw, all_meas), opt::rank_correlation(all_pred, all_meas),
      100 * median_abs_rel(all_raw, all_meas), 100 * median_abs_rel(all_pred, all_meas));
  model.set_calibration(cal);
  model.save();
}

class QuietReporter : public Reporter {
 public:
  void warn(std::string_view line) override { fmt::print(stderr, "warning: {}\n", line); }
};

// One model, in its own process so that its peak memory is its own: optimize, time the
// original and the optimized graph alternately, print the table row.
void optimize_one(const Args& a, const std::string& name, const std::string& cache,
                  const opt::MachineProfile& m) {
  QuietReporter rep;
  opt::MeasuredCostModel model(cache, m, rep);
  Graph g = build_model(name);
  opt::OptimizeOptions o;
  o.search.budget = a.budget;
  o.search.alpha = a.alpha;
  o.threads = a.threads;
  opt::RuleLibrary lib(driver::resolved({}), rep);
  opt::OptimizeResult r = opt::optimize_graph(g, o, lib, model, rep);
  double peak = process_peak_rss_mib();
  model.save();
  auto t = opt::time_alternated(g, r.optimized, a.runs, a.threads);
  std::string rules;
  for (auto& [rule, n] : r.rules_applied)
    rules += fmt::format("{}{} x{}", rules.empty() ? "" : ", ", rule, n);
  fmt::print(
      "| {} | {} | {} | {:.2f} | {:.2f} | {:+.1f}% | {:.2f} ({:.2f}) | {:.2f} ({:.2f}) | {:.2f}x "
      "({:.2f}x) | {} | {:.2f} ({:.2f}) | {:.0f} | ok: {:.1e} ({:.0f}) | {} |\n",
      name, g.num_ops(), r.optimized.num_ops(), r.initial_cost / 1e3, r.final_cost / 1e3,
      100 * (r.final_cost - r.initial_cost) / r.initial_cost, t.a.wall_ms, t.a.cpu_ms, t.b.wall_ms,
      t.b.cpu_ms, t.a.wall_ms / t.b.wall_ms, t.a.cpu_ms / t.b.cpu_ms, r.search.expanded,
      r.search.seconds, r.search.cpu_seconds, r.peak_rss_mib, r.check.max_rel(), peak,
      rules.empty() ? "none" : rules);
}

void optimize_all(const Args& a, const std::string& cache, const opt::MachineProfile& m,
                  bool calibrated) {
  fmt::print("## (2) optimization with the {} measured cost model\n\n",
             calibrated ? "calibrated" : "uncalibrated");
  fmt::print(
      "budget {}, alpha {}, run times: original and optimized alternated, median of {} "
      "runs each, {} thread(s); wall-clock ms with processor ms in parentheses. Each model runs "
      "in its own process (peak memory is that process's).\n\n",
      a.budget, a.alpha, a.runs, a.threads);
  fmt::print(
      "| model | ops before | ops after | cost before (ms) | cost after (ms) | cost change | "
      "run before, ms (CPU ms) | run after, ms (CPU ms) | speedup (CPU) | expanded | search s "
      "(processor s) | peak MiB after search | check: max rel diff (peak MiB with it) | rules "
      "applied |\n");
  fmt::print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (auto& name : a.models) {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      int code = 0;
      try {
        optimize_one(a, name, cache, m);
      } catch (const std::exception& e) {
        fmt::print("| {} | error: {} |\n", name, e.what());
        code = 1;
      }
      std::fflush(stdout);
      _exit(code);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
      fmt::print("| {} | the model's process failed |\n", name);
  }
}

}  // namespace
}  // namespace graphsub

int main(int argc, char** argv) {
  using namespace graphsub;
  try {
    Args a = parse(argc, argv);
    std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::string cache = a.cache_dir.empty() ? opt::default_cache_dir() : a.cache_dir;
    QuietReporter rep;
    opt::MachineProfile m = opt::cached_machine_profile(cache, a.threads, rep);
    fmt::print("# bench_optimize, {}\n\nmachine: {}\nload average at start: {}\n\n", date, m.str(),
               load_average());
    bool calibrated = false;
    {
      opt::MeasuredCostModel model(cache, m, rep);
      opt::RuleLibrary lib(driver::resolved({}), rep);
      if (a.calibrate) calibrate(a, model, lib.transforms());
      calibrated = model.calibration().fitted;
    }  // saved: the per-model processes load the table and the calibration
    optimize_all(a, cache, m, calibrated);
    fmt::print("\nload average at end: {}\n", load_average());
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 0;
}
