#include "driver/latency_guard_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "driver/scratch_dir.h"
#include "ir/parallel.h"

namespace graphsub::driver {

// The default number of timed runs: kDefaultGuardRuns, fewer for a slow model so that the
// timing takes about kGuardSeconds (VGG-19 runs 1.3 s a time: 5 models x 15 runs would take
// 100 s), never fewer than kMinGuardRuns.
int default_guard_runs(double one_run_ms, size_t models) {
  constexpr double kGuardSeconds = 12;
  constexpr int kMinGuardRuns = 5;
  double fit = kGuardSeconds * 1e3 / (std::max(one_run_ms, 1e-3) * static_cast<double>(models));
  return static_cast<int>(std::clamp(fit, double(kMinGuardRuns), double(kDefaultGuardRuns)));
}

double time_probe(ort::Worker& worker) {
  auto t = worker.call({{"op", "time"}, {"ids", {"probe"}}, {"runs", 1}, {"warmup", 1}});
  worker.call({{"op", "unload"}, {"id", "probe"}});
  return t.at("ms").at("probe").at(0).get<double>();
}

GuardStep run_latency_guard(ort::Worker& worker, const ImportedModel& m,
                            const std::vector<GuardCandidate>& candidates,
                            double original_predicted_ms, const std::string& original_path,
                            const std::string* model_bytes, const ExportOptions& eo, int runs,
                            Reporter& rep) {
  GuardStep step;
  ScratchDir dir;
  std::string original =
      original_path.empty() ? dir.write("original.onnx", *model_bytes) : original_path;
  // The candidates are written on this process's threads while ONNX Runtime, in its own
  // process, loads the original: for a large model each takes seconds (NasNet-A, 154 MB:
  // about 1.7 s per file). The worker times nothing until they are written, so the probe's
  // time is not disturbed by them.
  std::vector<std::string> files;
  for (size_t i = 0; i < candidates.size(); ++i)
    files.push_back(dir.file(fmt::format("candidate{}.onnx", i)));
  std::exception_ptr export_error;
  std::jthread exporter([&] {  // joined on every way out of this function
    try {
      parallel_for(
          files.size(), hardware_threads(),
          [&](size_t i, size_t) {
            export_onnx_file(*candidates[i].graph, m.info.get(), files[i], eo);
          },
          [](size_t) {});
    } catch (...) {
      export_error = std::current_exception();
    }
  });
  // The original must run in ONNX Runtime for a comparison to mean anything (a model with
  // operators of another runtime's domain may not); then the guard is skipped, and says so.
  std::string cannot_run;
  try {
    worker.call({{"op", "load"}, {"id", "probe"}, {"path", original}, {"threads", 1}});
  } catch (const Error& e) {
    cannot_run = e.what();
  }
  exporter.join();
  if (export_error) std::rethrow_exception(export_error);
  double probe_ms = 0;
  if (cannot_run.empty()) {
    try {
      probe_ms = time_probe(worker);
    } catch (const Error& e) {
      cannot_run = e.what();
    }
  }
  if (!cannot_run.empty()) {
    step.note =
        fmt::format("latency guard skipped: ONNX Runtime cannot run the original ({})", cannot_run);
    rep.warn(step.note);
    return step;
  }
  rep.progress(
      "guard", 0, 0,
      fmt::format("timing the original and {} candidate(s) in ONNX Runtime", files.size()));
  ort::GuardOptions g;
  g.runs = runs > 0 ? runs : default_guard_runs(probe_ms, files.size() + 2);
  try {
    step.result = ort::guard_latency(worker, original, files, g);
  } catch (const Error& e) {
    throw Error(fmt::format(
        "the optimized model does not run in ONNX Runtime ({}); nothing was written", e.what()));
  }
  step.result->original.predicted_ms = original_predicted_ms;
  for (size_t i = 0; i < candidates.size(); ++i)
    step.result->candidates[i].predicted_ms = candidates[i].predicted_ms;
  step.write_original = step.result->chosen < 0;
  step.chosen = std::max(0, step.result->chosen);
  return step;
}

}  // namespace graphsub::driver
