#pragma once
// The ONNX job's last step before writing, for the ort target: the original file and the
// search's few best distinct graphs are timed end to end in ONNX Runtime
// (ort/latency_guard.h), and so is the original as imported (cleaned: Identity/Dropout and
// no-ops removed, shape computations folded); what is written is the fastest of them beyond
// the noise band, the search's choice among equals, and where none is faster than the input
// beyond the band, the input as given. Symbolic dimensions are timed at sizes a model is run
// at (guard_dims), not at the import's 2: BERT's cleaned file ran 1.00x at sequence 2 and
// 0.93x at 64.
#include <cstdint>
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
  std::string note;          // why the guard did not run, or timed fewer files ("" when neither)
};

// A graph the guard may write, with the cost model's price of it.
struct GuardCandidate {
  const Graph* graph = nullptr;
  double predicted_ms = 0;
};

// The guard's timed runs by default: kDefaultGuardRuns, fewer for a slow model so that timing
// `models` models takes about 12 s, never fewer than 5.
int default_guard_runs(double one_run_ms, size_t models);

// How many of `candidates` (the search's choice, then its runners-up) the default guard times
// beside `others` files (the input, its control, the cleaned original): all, unless even 5
// runs of each would take more than about 12 s; then runners-up are left out, the search's
// choice never. Whisper's encoder, 0.5 s a run: the choice alone.
size_t guard_candidates_in_time(double one_run_ms, size_t candidates, size_t others);

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

// The value each named input dimension was imported at (also those written as fixed, where
// the model did not import at another value of one); and the same with the batch at 1 and the
// other dimensions scaled by one factor up to about kGuardDim, so that lengths tied to each
// other (a mask's over a cache's past and its new tokens) stay so. Where the model does not
// run at guard_dims(), the guard times it at these, in turn.
std::map<std::string, int64_t> imported_dims(const OnnxModelInfo& info);
std::map<std::string, int64_t> scaled_imported_dims(const OnnxModelInfo& info);

// What the worker can hold at once. ONNX Runtime keeps a session's weights and, at level
// all, prepacked copies of its MatMul and Conv weights: about kSessionBytesPerFileByte bytes
// per byte of the file. The input and its control, the candidates (the search's choice
// first) and the cleaned original must fit in kGuardMemoryShare of the available memory;
// runners-up are left out first, then the cleaned original; where the input, its control and
// the search's choice do not fit, nothing is timed (fits false). Hugging Face Phi (2.0 GB)
// with six files loaded was killed for memory on a 24 GB machine.
inline constexpr double kSessionBytesPerFileByte = 2.0;
inline constexpr double kGuardMemoryShare = 0.75;
struct GuardFit {
  bool fits = true;
  size_t candidates = 0;    // how many of the candidates are timed (a prefix)
  bool cleaned = true;      // whether the cleaned original is timed
  double needed_bytes = 0;  // what the smallest set (input twice, the search's choice) needs
};
GuardFit fit_guard_in_memory(uintmax_t original_bytes, const std::vector<uintmax_t>& candidates,
                             uintmax_t cleaned_bytes, uintmax_t available_bytes);

// `original_path`: the input file, or "" with the model in `model_bytes`. `candidates`: the
// search's choice first, then its runners-up, cheapest predicted first. `runs` <= 0: the
// default (kDefaultGuardRuns, fewer for models whose one run takes long).
GuardStep run_latency_guard(ort::Worker& worker, const ImportedModel& m,
                            const std::vector<GuardCandidate>& candidates,
                            double original_predicted_ms, const std::string& original_path,
                            const std::string* model_bytes, const ExportOptions& eo, int runs,
                            const std::map<std::string, int64_t>& dims, Reporter& rep);

}  // namespace graphsub::driver
