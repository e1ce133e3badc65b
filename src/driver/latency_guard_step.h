#pragma once
// The ONNX job's last step before writing, for the ort target: the original file and the
// optimized model are timed end to end in ONNX Runtime (ort/latency_guard.h), and a result
// slower than the original beyond the noise band is replaced by the original as imported
// (cleaned: Identity/Dropout removed, shape computations folded).
#include <optional>
#include <string>

#include "onnx/onnx_model.h"
#include "ort/latency_guard.h"

namespace graphsub::driver {

struct GuardStep {
  std::optional<ort::GuardResult> result;  // unset when the guard could not run
  bool write_original = false;
  std::string note;  // why the guard did not run ("" when it did)
};

// `original_path`: the input file, or "" with the model in `model_bytes`.
GuardStep run_latency_guard(ort::Worker& worker, const ImportedModel& m, const Graph& optimized,
                            const std::string& original_path, const std::string* model_bytes,
                            const ExportOptions& eo, int runs, Reporter& rep);

}  // namespace graphsub::driver
