#pragma once
// The ONNX job's last step before writing, for the ort target: the original file and the
// search's few best distinct graphs are timed end to end in ONNX Runtime
// (ort/latency_guard.h), and so is the original as imported (cleaned: Identity/Dropout and
// no-ops removed, shape computations folded); what is written is the fastest of them beyond
// the noise band, the search's choice among equals, and where none is faster than the input
// beyond the band, the input as given. Symbolic dimensions are timed at sizes a model is run
// at (guard_dims), not at the import's 2: BERT's cleaned file ran 1.00x at sequence 2 and
// 0.93x at 64.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "driver/optimize_options.h"
#include "onnx/onnx_model.h"
#include "ort/latency_guard.h"

namespace graphsub::driver {

struct GuardStep {
  std::optional<ort::GuardResult> result;  // unset when the guard could not run
  bool write_original = false;
  bool write_input = false;  // with write_original: the input as given, not as imported
  int chosen = 0;            // index into the candidates given (when write_original is false)
  std::string note;          // why the guard did not run ("" when it did)
};

// A graph the guard may write, with the cost model's price of it.
struct GuardCandidate {
  const Graph* graph = nullptr;
  double predicted_ms = 0;
};

// The guard's timed runs by default: kDefaultGuardRuns, fewer for a slow model so that timing
// `models` models takes about 12 s, never fewer than 5.
int default_guard_runs(double one_run_ms, size_t models);

// One timed run (after one warm-up) of the model the worker has loaded as "probe", in ms; the
// model is unloaded after. What default_guard_runs() scales by.
double time_probe(ort::Worker& worker);

// The guard's value of each symbolic input dimension: the user's (--dim, or read from an
// --input-shape), else 1 for a batch (named so, or leading every input it is in), else
// kGuardDim (a sequence, an image side: at 2 their costs are too small to tell rewrites apart).
inline constexpr int64_t kGuardDim = 64;
std::map<std::string, int64_t> guard_dims(const OnnxModelInfo& info,
                                          const std::map<std::string, int64_t>& dim_values,
                                          const std::map<std::string, Shape>& input_shapes);

// `original_path`: the input file, or "" with the model in `model_bytes`. `candidates`: the
// search's choice first, then its runners-up, cheapest predicted first. `runs` <= 0: the
// default (kDefaultGuardRuns, fewer for models whose one run takes long).
GuardStep run_latency_guard(ort::Worker& worker, const ImportedModel& m,
                            const std::vector<GuardCandidate>& candidates,
                            double original_predicted_ms, const std::string& original_path,
                            const std::string* model_bytes, const ExportOptions& eo, int runs,
                            const std::map<std::string, int64_t>& dims, Reporter& rep);

}  // namespace graphsub::driver
