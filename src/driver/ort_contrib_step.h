#pragma once
// --ort-contrib-ops: after the latency guard, the model about to be written gets ONNX Runtime's
// own fused operators where its optimizer misses them (ort/ort_attention_fusion.h). The fused
// file is checked against the unfused one in ONNX Runtime (graphsub's executors cannot run
// com.microsoft operators) and timed against it; it replaces the unfused file only when it
// computes the same within the tolerance and is not slower beyond the noise band.
#include <optional>
#include <string>
#include <vector>

#include "ir/report.h"
#include "ort/latency_guard.h"
#include "ort/runtime_compare.h"

namespace graphsub::driver {

struct ContribStep {
  std::vector<std::string> sites;              // one line per fused attention
  std::vector<ort::RuntimeComparison> checks;  // one per value of the symbolic dimensions
  std::optional<ort::GuardResult> timing;      // the unfused file as "original", the fused one
  bool written = false;
  std::string verdict;
};

// `model_bytes`: the model about to be written (weights inline); replaced by the fused model
// when that is written. The check runs at each value of `dims` for the symbolic dimensions.
// `guard_runs`: timed runs (0: not timed, -1: the guard's default). `baseline`: the file the
// fused one must beat ("" : the unfused model), the input itself where the guard found no
// rewrite of it faster.
ContribStep run_ort_contrib_step(ort::Worker& worker, std::string& model_bytes,
                                 const ort::CompareOptions& check, const std::vector<int64_t>& dims,
                                 int guard_runs, Reporter& rep, const std::string& baseline = "");

}  // namespace graphsub::driver
