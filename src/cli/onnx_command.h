#pragma once
// The ONNX form of `graphsub optimize`: `graphsub optimize in.onnx -o out.onnx [flags]`, and
// the short form `graphsub in.onnx out.onnx [flags]`. Import, optimize, check the result
// numerically, export.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/optimize_command.h"

namespace graphsub {

struct OnnxCliOptions {
  std::string model;   // input .onnx (positional)
  std::string output;  // -o
  int check_runs = 3;  // --check N (0: no check)
  std::string check_executor = "onednn";
  double rtol = 1e-4, atol = 1e-5;
  std::vector<std::string> input_shapes;  // NAME=1x3x224x224
  bool external_data = false;
  int64_t opset = 0;
};

// Adds the ONNX options to a command (positional model, -o, --check, --input-shape, ...).
void add_onnx_options(CLI::App& cmd, OnnxCliOptions& o);

// Runs the ONNX form with the optimizer flags the command parsed (--cost, --budget,
// --disable-rule, --no-check = --check 0, --seed, ...); returns the exit status (0 success,
// 1 when the check finds a mismatch). Throws Error on bad input.
int run_onnx_optimize(const OnnxCliOptions& o, const OptimizeCliOptions& flags_opt,
                      GlobalFlags& flags);

// `graphsub export-onnx --model NAME -o out.onnx`: a built-in model as an ONNX file (for
// ONNX Runtime comparisons of the built-in benchmark models).
void add_export_onnx_command(CLI::App& app, GlobalFlags& flags);

// `graphsub in.onnx out.onnx [flags]` becomes `graphsub optimize in.onnx -o out.onnx [flags]`;
// any other command line is returned unchanged. The result is in CLI11's order for
// App::parse(std::vector<std::string>&) (reversed, program name dropped).
std::vector<std::string> expand_onnx_short_form(int argc, char** argv);

// The flag that disables one rule by name in the optimize command (named in mismatch reports).
inline constexpr const char* kDisableRuleFlag = "--disable-rule";

}  // namespace graphsub
