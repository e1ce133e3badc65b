#pragma once
// Two models compared output by output in ONNX Runtime itself, on the same seeded random
// inputs: the check of a file that graphsub's own executors cannot run (one with ONNX
// Runtime's com.microsoft operators).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ort/ort_worker.h"

namespace graphsub::ort {

struct OutputComparison {
  std::string name;
  double max_abs_diff = 0, max_rel_diff = 0, max_abs_value = 0;  // -1: shapes differ
  bool match = true;
  std::string note;  // why it cannot match (a shape mismatch), or ""
};

struct RuntimeComparison {
  bool match = true;
  int sets = 0;                         // random input sets run
  int64_t dim = 1;                      // the value symbolic input dimensions had
  std::map<std::string, int64_t> dims;  // or their values by name, where given
  std::vector<OutputComparison> outputs;
  // Why the reference could not run on the inputs (symbolic dimensions at values the model
  // does not take: a cache's length and the mask's, say); nothing was compared. "" otherwise.
  std::string reference_error;
};

struct CompareOptions {
  int sets = 3;
  uint64_t seed = 1;
  double rtol = 1e-4, atol = 1e-5;      // graphsub's tolerance (src/exec/host_tensor.h)
  int64_t dim = 1;                      // value of symbolic input dimensions
  std::map<std::string, int64_t> dims;  // values by name, overriding `dim`
};

// Runs `candidate` against `reference` (the paths of two models with the same inputs and
// outputs); throws Error when either cannot be loaded or the candidate cannot run (where the
// reference cannot run, the comparison says why, RuntimeComparison::reference_error).
RuntimeComparison compare_in_runtime(Worker& worker, const std::string& reference,
                                     const std::string& candidate, const CompareOptions& opts);

}  // namespace graphsub::ort
