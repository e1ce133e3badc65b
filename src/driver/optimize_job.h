#pragma once
// The optimize jobs, shared by the command line and the Python module: the ONNX pipeline
// import -> optimize -> check -> export, and the built-in model job (optimize, time both
// graphs, write DOT files). Each fills a Report; an observer sees each stage as it ends so
// that the command line can print while the job runs.
#include <memory>
#include <string>

#include "driver/optimize_options.h"
#include "driver/report.h"
#include "ir/report.h"
#include "onnx/onnx_model.h"
#include "opt/transforms/rule_library.h"
#include "ort/latency_guard.h"

namespace graphsub::driver {

class OnnxJobObserver {
 public:
  virtual ~OnnxJobObserver() = default;
  virtual void imported(const ImportedModel& /*m*/) {}
  virtual void optimized(const Graph& /*before*/, const opt::OptimizeResult& /*r*/) {}
  // `at` is "" for the check at the import's shapes, "NAME=V" for the check again at the
  // second value of a symbolic dimension.
  virtual void checked(const ResultCheck& /*c*/, const Graph& /*original*/, double /*seconds*/,
                       const std::string& /*at*/) {}
  // `why`: "" for --check 0; else why the written model needed no check ("the input is
  // written as given").
  virtual void check_skipped(const std::string& /*why*/) {}
  // The ort target's end-to-end timing of the original and the optimized model.
  virtual void guarded(const ort::GuardResult& /*g*/) {}
  // The ort target: ONNX Runtime's blocked layout, and the channel padding tried.
  virtual void layout(const LayoutStep& /*l*/) {}
  // The ort target: a lowering choice made for the runtime in the written file (one line).
  virtual void lowered(const std::string& /*line*/) {}
};

struct OnnxJobResult {
  Report report;
  std::string model_bytes;  // the optimized model, when no output file was given
  // When the check fails nothing is written: the message names the tolerance and the first
  // rule application after which the outputs differ ("" on success).
  std::string failure;
};

// The rule library of the options, loaded once per job (rule files, built-in rules, minus
// the disabled ones; an unknown disabled name is an Error). `runtime_kernels`
// (--ort-contrib-ops): the shipped libraries also get the rules that introduce ONNX Runtime's
// fused operators, which only the ort target may write (validate() refuses the flag
// elsewhere); explicit rule files are taken as given.
std::unique_ptr<opt::RuleLibrary> load_rule_library(const SearchJobOptions& s, Reporter& rep,
                                                    bool runtime_kernels = false);

// Runs the ONNX job on o.input, or on `model_bytes` when o.input is empty. Validates the
// options first (validate()); the importer checks the --input-shape names.
OnnxJobResult run_onnx_job(const OnnxJobOptions& o, const std::string* model_bytes,
                           const opt::RuleLibrary& lib, Reporter& rep, OnnxJobObserver& observer);

// Optimizes the built-in model; writes the DOT files when asked; times both graphs with
// o.runs > 0. Throws Error when the optimizer's check fails.
Report run_model_job(const ModelJobOptions& o, const opt::RuleLibrary& lib, Reporter& rep);

// The flag that disables one rule by name (named in mismatch reports).
inline constexpr const char* kDisableRuleFlag = "--disable-rule";

}  // namespace graphsub::driver
