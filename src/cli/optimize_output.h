#pragma once
// What `graphsub optimize` prints: the import summary, the operator table, costs, search
// statistics and the check, for the ONNX form (as each stage ends) and the built-in model form.
#include "driver/optimize_job.h"

namespace graphsub {

// Prints the ONNX job's stages as they end (nothing but a failed check when quiet).
class OnnxJobPrinter : public driver::OnnxJobObserver {
 public:
  OnnxJobPrinter(std::string input, bool quiet) : input_(std::move(input)), quiet_(quiet) {}
  void imported(const ImportedModel& m) override;
  void optimized(const Graph& before, const opt::OptimizeResult& r) override;
  void checked(const ResultCheck& c, const Graph& original, double seconds,
               const std::string& at) override;
  void check_skipped(const std::string& why) override;
  void guarded(const ort::GuardResult& g) override;
  void layout(const driver::LayoutStep& l) override;
  void lowered(const std::string& line) override;

 private:
  std::string input_;
  bool quiet_;
};

// "wrote OUT (N MB[, weights in OUT.data]), onnx::checker ok"
// "wrote OUT (size)" unless quiet, and, quiet or not, the runtime's own operators the search
// introduced (driver::runtime_operators_added), which tie the file to that runtime.
void print_written(const std::string& output, const driver::Report& r, bool quiet);

// The built-in model form's summary table (printed also when quiet, as before).
void print_model_report(const driver::Report& r, const driver::ModelJobOptions& o);

}  // namespace graphsub
