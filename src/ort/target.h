#pragma once
// The runtime a model is optimized for: "ort" (ONNX Runtime, through the worker) or "onednn"
// (graphsub's own executor). ONNX models default to ONNX Runtime, where users run them; when
// no ONNX Runtime worker (ort_worker.h) starts, the default falls back to oneDNN and says why,
// while an explicit `--target ort` that cannot start is an error.
#include <memory>
#include <string>
#include <vector>

#include "ort/ort_worker.h"

namespace graphsub::ort {

// The targets, in the order the help text lists them.
const std::vector<std::string>& target_names();

struct Target {
  std::string name;                // "ort" or "onednn"
  std::string fallback;            // why the default ort target was not used ("" when it was)
  std::unique_ptr<Worker> worker;  // set for "ort"
};

// requested: "" (the default for ONNX models: ort, else onednn), "ort" or "onednn".
// Throws Error for an unknown name or an explicit ort that cannot start.
Target open_target(const std::string& requested, const WorkerOptions& opts = {});

}  // namespace graphsub::ort
