#pragma once
// What an optimize job did, as data: the command line's --report-json and the Python
// module's report dict are both this struct serialized by report_json(), so they cannot
// disagree. Everything that depends on the machine's load (seconds, memory, measured run
// times) is under "timings"; the rest is the same for the same input and flags.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "check/equivalence.h"
#include "driver/nchwc_layout_step.h"
#include "onnx/onnx_model.h"
#include "opt/cost/runtime.h"
#include "opt/search/optimize.h"
#include "ort/latency_guard.h"
#include "ort/runtime_compare.h"

namespace graphsub::driver {

struct Report {
  std::string job;                             // "onnx" or "model"
  std::map<std::string, std::string> options;  // the options that shape the result, as text
  // ONNX form only: what the import found, and the ONNX nodes before and after.
  std::optional<int64_t> opset;
  std::map<std::string, int64_t> onnx_ops_before, onnx_ops_after;
  std::vector<OpaqueNodeInfo> opaque;
  int64_t removed = 0;
  int64_t no_ops = 0;  // x + 0, x * 1 with constants, zero Pads, whole Slices: removed at import
  std::vector<std::string> import_notes;
  // graphsub operators before and after.
  std::map<std::string, size_t> ops_before, ops_after;
  // The optimizer's result (costs predicted, rules, search statistics).
  opt::OptimizeResult result;
  // The check of the ONNX form (several runs, per output) ...
  std::optional<ResultCheck> check;
  // The same check again at the second value of each symbolic dimension ("batch=3").
  std::vector<std::pair<std::string, ResultCheck>> symbolic_checks;
  // Why no check ran though checking was on: the guard chose to write the input as given or
  // the original as imported, which compute what the input computes ("" otherwise).
  std::string check_not_needed;
  // The ort target's latency guard (unset when it did not run); load-dependent, so reported
  // under "timings".
  std::optional<ort::GuardResult> guard;
  // A written file with ONNX Runtime's own operators run there against the input (one entry per
  // value of the symbolic dimensions; empty when there was none to check).
  std::vector<ort::RuntimeComparison> runtime_checks;
  // The ort target: ONNX Runtime's blocked layout predicted, and the channel padding tried
  // (what is written, which the guard chose, under "timings").
  std::optional<LayoutStep> layout;
  // ... and the built-in model form's (the optimizer's own check).
  bool model_checked = false;
  // Timings: wall clock of each stage and measured run times (model form with --runs).
  std::map<std::string, double> seconds;  // "import", "check", "export"
  std::optional<opt::PairTiming> measured;
  int measured_runs = 0, measured_threads = 0;
};

// The report as JSON text (two-space indent, keys in a fixed order, ends with a newline).
std::string report_json(const Report& r);

// Writes report_json(r) to `path`; throws Error "cannot write PATH: REASON".
void write_report_json(const Report& r, const std::string& path);

// The operators of a runtime's own domain (com.microsoft) the written file holds beyond those
// of the input, by "domain:op_type": what ties it to that runtime (--ort-contrib-ops).
std::map<std::string, int64_t> runtime_operators_added(const Report& r);

}  // namespace graphsub::driver
