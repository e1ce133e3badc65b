#include "driver/latency_guard_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/error.h"
#include "driver/scratch_dir.h"
#include "ir/parallel.h"

namespace graphsub::driver {

// The default number of timed runs: kDefaultGuardRuns, fewer for a slow model so that the
// timing takes about kGuardSeconds (VGG-19 runs 1.3 s a time: 5 models x 15 runs would take
// 100 s), never fewer than kMinGuardRuns.
constexpr double kOneWarmupMs = 100;

constexpr double kGuardSeconds = 12;
constexpr int kMinGuardRuns = 5;

int default_guard_runs(double one_run_ms, size_t models) {
  double fit = kGuardSeconds * 1e3 / (std::max(one_run_ms, 1e-3) * static_cast<double>(models));
  return static_cast<int>(std::clamp(fit, double(kMinGuardRuns), double(kDefaultGuardRuns)));
}

size_t guard_candidates_in_time(double one_run_ms, size_t candidates, size_t others) {
  double models = kGuardSeconds * 1e3 / (std::max(one_run_ms, 1e-3) * kMinGuardRuns);
  double room = std::floor(models) - static_cast<double>(others);
  return static_cast<size_t>(std::clamp(room, 1.0, static_cast<double>(candidates)));
}

namespace {

// A batch by its name, else by leading every input it is in: a (seq, batch, d) layout leads
// with its sequence, which its mask or another input usually has at another axis.
bool is_batch_dim(const OnnxModelInfo& info, const std::string& name) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("batch") != std::string::npos || lower == "n") return true;
  bool leads = false, inner = false;
  for (const OnnxValue& in : info.inputs)
    for (size_t a = 0; a < in.dim_params.size(); ++a)
      if (in.dim_params[a] == name) (a == 0 ? leads : inner) = true;
  return leads && !inner;
}

}  // namespace

std::map<std::string, int64_t> imported_dims(const OnnxModelInfo& info) {
  std::map<std::string, int64_t> dims;
  for (const OnnxValue& v : info.inputs)
    for (size_t a = 0; a < v.dim_params.size() && a < v.shape.size(); ++a)
      if (!v.dim_params[a].empty()) dims.emplace(v.dim_params[a], v.shape[a]);
  return dims;
}

std::map<std::string, int64_t> scaled_imported_dims(const OnnxModelInfo& info) {
  std::map<std::string, int64_t> dims = imported_dims(info);
  int64_t largest = 1;
  for (const auto& [name, v] : dims)
    if (!is_batch_dim(info, name)) largest = std::max(largest, v);
  const int64_t factor = std::max<int64_t>(1, kGuardDim / largest);
  for (auto& [name, v] : dims) v = is_batch_dim(info, name) ? 1 : v * factor;
  return dims;
}

std::map<std::string, int64_t> guard_dims(const OnnxModelInfo& info,
                                          const std::map<std::string, int64_t>& dim_values,
                                          const std::map<std::string, Shape>& input_shapes) {
  std::map<std::string, int64_t> dims;
  for (const OnnxValue& in : info.inputs) {
    auto given = input_shapes.find(in.name);
    for (size_t a = 0; a < in.dim_params.size(); ++a) {
      const std::string& name = in.dim_params[a];
      if (name.empty()) continue;
      if (given != input_shapes.end() && a < given->second.size())
        dims[name] = given->second[a];
      else if (auto v = dim_values.find(name); v != dim_values.end())
        dims.try_emplace(name, v->second);
      else
        dims.try_emplace(name, is_batch_dim(info, name) ? 1 : kGuardDim);
    }
  }
  return dims;
}

GuardFit fit_guard_in_memory(uintmax_t original_bytes, const std::vector<uintmax_t>& candidates,
                             uintmax_t cleaned_bytes, uintmax_t available_bytes) {
  GuardFit fit;
  double budget = kGuardMemoryShare * static_cast<double>(available_bytes);
  auto need = [&](size_t n, bool cleaned) {
    double b = 2.0 * static_cast<double>(original_bytes);
    for (size_t i = 0; i < n && i < candidates.size(); ++i) b += static_cast<double>(candidates[i]);
    if (cleaned) b += static_cast<double>(cleaned_bytes);
    return kSessionBytesPerFileByte * b;
  };
  fit.needed_bytes = need(1, false);
  for (bool cleaned : {true, false})
    for (size_t n = candidates.size(); n >= 1; --n)
      if (need(n, cleaned) <= budget) {
        fit.candidates = n;
        fit.cleaned = cleaned;
        return fit;
      }
  fit.fits = false;
  fit.candidates = 0;
  fit.cleaned = false;
  return fit;
}

namespace {

// MemAvailable from /proc/meminfo, in bytes; 0 where it cannot be read (then no limit).
uintmax_t available_memory() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uintmax_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

// A model file's bytes with its external data (OUT.onnx.data), 0 where it is missing.
uintmax_t model_bytes_on_disk(const std::string& path) {
  uintmax_t total = 0;
  for (const std::string& p : {path, path + ".data"}) {
    std::error_code ec;
    uintmax_t n = std::filesystem::file_size(p, ec);
    if (!ec) total += n;
  }
  return total;
}

}  // namespace

double time_probe(ort::Worker& worker) {
  auto t = worker.call({{"op", "time"}, {"ids", {"probe"}}, {"runs", 1}, {"warmup", 1}});
  worker.call({{"op", "unload"}, {"id", "probe"}});
  return t.at("ms").at("probe").at(0).get<double>();
}

GuardStep run_latency_guard(ort::Worker& worker, const ImportedModel& m,
                            const std::vector<GuardCandidate>& candidates,
                            double original_predicted_ms, const std::string& original_path,
                            const std::string* model_bytes, const ExportOptions& eo, int runs,
                            const std::map<std::string, int64_t>& dims, Reporter& rep) {
  GuardStep step;
  ScratchDir dir;
  std::string original =
      original_path.empty() ? dir.write("original.onnx", *model_bytes) : original_path;
  std::string cleaned = dir.file("cleaned.onnx");
  // The candidates are written on this process's threads while ONNX Runtime, in its own
  // process, loads the original: for a large model each takes seconds (NasNet-A, 154 MB:
  // about 1.7 s per file). The worker times nothing until they are written, so the probe's
  // time is not disturbed by them.
  std::vector<std::string> files;
  for (size_t i = 0; i < candidates.size(); ++i)
    files.push_back(dir.file(fmt::format("candidate{}.onnx", i)));
  std::vector<const Graph*> graphs;
  for (const GuardCandidate& c : candidates) graphs.push_back(c.graph);
  graphs.push_back(&m.graph);
  std::exception_ptr export_error;
  std::jthread exporter([&] {  // joined on every way out of this function
    try {
      parallel_for(
          graphs.size(), hardware_threads(),
          [&](size_t i, size_t) {
            export_onnx_file(*graphs[i], m.info.get(), i < files.size() ? files[i] : cleaned, eo);
          },
          [](size_t) {});
    } catch (...) {
      export_error = std::current_exception();
    }
  });
  // The original must run in ONNX Runtime for a comparison to mean anything (a model with
  // operators of another runtime's domain may not); then the guard is skipped, and says so.
  // At the guard's sizes first; a model that does not run there (a symbolic dimension tied
  // to a weight's or to another's) is timed at the sizes it was imported and checked at,
  // scaled up first.
  std::map<std::string, int64_t> timed_dims = dims;
  std::string cannot_run;
  auto probe = [&]() -> double {
    cannot_run.clear();
    try {
      worker.call({{"op", "load"},
                   {"id", "probe"},
                   {"path", original},
                   {"threads", 1},
                   {"dims", timed_dims}});
    } catch (const Error& e) {
      cannot_run = e.what();
      return 0;
    }
    if (exporter.joinable()) exporter.join();
    try {
      return time_probe(worker);
    } catch (const Error& e) {
      cannot_run = e.what();
      return 0;
    }
  };
  double probe_ms = probe();
  // Then at the imported values with the lengths scaled up to the guard's size (the batch at
  // 1): a sum of two lengths (a cache's past and new tokens and its mask's) stays their sum;
  // then at the imported values themselves.
  for (auto fallback : {scaled_imported_dims, imported_dims}) {
    if (cannot_run.empty() || m.info->symbolic.empty()) break;
    timed_dims = fallback(*m.info);
    probe_ms = probe();
  }
  if (exporter.joinable()) exporter.join();
  if (export_error) std::rethrow_exception(export_error);
  if (!cannot_run.empty()) {
    step.note =
        fmt::format("latency guard skipped: ONNX Runtime cannot run the original ({})", cannot_run);
    rep.warn(step.note);
    return step;
  }
  if (uintmax_t available = available_memory()) {
    std::vector<uintmax_t> sizes;
    for (const std::string& f : files) sizes.push_back(model_bytes_on_disk(f));
    GuardFit fit = fit_guard_in_memory(model_bytes_on_disk(original), sizes,
                                       model_bytes_on_disk(cleaned), available);
    if (!fit.fits) {
      // The burden of proof is on the rewrite: untimed, nothing but the input is written.
      step.note = fmt::format(
          "latency guard skipped: timing the input, its control and the optimized model in "
          "ONNX Runtime needs about {:.1f} GB, and {:.1f} GB is available (the guard uses at "
          "most {:.0f}%): the input is written as given",
          fit.needed_bytes / 1e9, static_cast<double>(available) / 1e9, 100 * kGuardMemoryShare);
      rep.warn(step.note);
      step.write_original = true;
      step.write_input = true;
      return step;
    }
    if (fit.candidates < files.size() || !fit.cleaned) {
      step.note = fmt::format(
          "latency guard: {} of {} candidate(s){} timed, as many as {:.1f} GB of available "
          "memory holds in ONNX Runtime",
          fit.candidates, files.size(), fit.cleaned ? " and the cleaned original" : "",
          static_cast<double>(available) / 1e9);
      rep.warn(step.note);
      files.resize(fit.candidates);
      if (!fit.cleaned) cleaned.clear();
    }
  }
  if (runs <= 0) {
    size_t others = cleaned.empty() ? 2 : 3;
    size_t n = guard_candidates_in_time(probe_ms, files.size(), others);
    if (n < files.size()) {
      std::string why = fmt::format(
          "latency guard: {} of {} candidate(s) timed: one run takes {:.0f} ms, and {} runs of "
          "each file would take more than about {:.0f} s",
          n, files.size(), probe_ms, kMinGuardRuns, kGuardSeconds);
      step.note = step.note.empty() ? why : step.note + "; " + why;
      rep.warn(why);
      files.resize(n);
    }
  }
  rep.progress(
      "guard", 0, 0,
      fmt::format("timing the original and {} candidate(s) in ONNX Runtime", files.size()));
  ort::GuardOptions g;
  g.runs = runs > 0 ? runs : default_guard_runs(probe_ms, files.size() + 3);
  g.dims = timed_dims;
  // A run of a slow model is its own warm-up: the first run makes the arena's allocations,
  // and past 100 ms a second untimed run costs more than it steadies (Whisper's encoder, 0.5 s
  // a run, six files).
  if (probe_ms > kOneWarmupMs) g.warmup = 1;
  try {
    step.result = ort::guard_latency(worker, original, files, g, cleaned);
  } catch (const Error& e) {
    throw Error(fmt::format(
        "the optimized model does not run in ONNX Runtime ({}); nothing was written", e.what()));
  }
  // A file tuned for ONNX Runtime must not run slower in OpenVINO (where the worker runs it).
  rep.progress("guard", 0, 0, "timing the rewrite against the original in OpenVINO");
  ort::guard_in_openvino(worker, original, files, g, *step.result);
  step.result->original.predicted_ms = original_predicted_ms;
  for (size_t i = 0; i < step.result->candidates.size(); ++i)
    step.result->candidates[i].predicted_ms = candidates[i].predicted_ms;
  step.write_original = step.result->chosen < 0;
  // Without the cleaned original timed, nothing untimed is written: the input as given.
  if (cleaned.empty() && step.write_original) step.result->write_input = true;
  step.write_input = step.result->write_input;
  step.chosen = std::max(0, step.result->chosen);
  return step;
}

}  // namespace graphsub::driver
