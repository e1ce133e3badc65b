#pragma once
// The options of the optimize jobs, as plain structs that the command line's flags and the
// Python module's keyword arguments are bound to, and one validation per job: a value that
// would make the answer meaningless (NaN tolerance, an unbounded run, a rule "file" that is a
// folder, an output that is the input) is an error naming the flag before any long work.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor_type.h"
#include "opt/search/optimize.h"

namespace graphsub::driver {

// A bad option value: an Error (same messages everywhere), told apart so that the Python
// module can raise it as ValueError too.
class OptionError : public Error {
 public:
  using Error::Error;
};

// The search and its cost model: shared by both jobs.
struct SearchJobOptions {
  opt::OptimizeOptions opt;  // alpha, budget, time limit, queue, threads, seed, tolerance
  // The rule files (none: the shipped ones, data_paths.h), built-in rules, disabled names.
  opt::RuleLibraryOptions rules;
  // The runtime whose costs are optimized (cost_targets()); "": ONNX models ort (falling
  // back to onednn, with a note, where no ONNX Runtime worker starts), built-in models onednn.
  std::string target;
  // The onednn target's cost model: analytic | measured; "": analytic. The ort target
  // measures its own costs, so a --cost there is an error.
  std::string cost;
};

// The runtimes the optimizer can price graphs for.
const std::vector<std::string>& cost_targets();

// `graphsub optimize in.onnx -o out.onnx` and graphsub.optimize(model): import, optimize,
// check on random inputs, export.
struct OnnxJobOptions {
  SearchJobOptions search;                // its opt.tolerance is the check's (--rtol, --atol)
  std::string input;                      // path of the model ("" when given as bytes)
  std::string output;                     // "" only when the caller keeps the bytes (Python)
  int check_runs = 3;                     // 0: no check
  std::string check_executor = "onednn";  // onednn | reference
  std::vector<std::string> input_shapes;  // NAME=1x3x224x224
  std::vector<std::string> dims;          // NAME=VALUE: a symbolic dimension, by its name
  bool external_data = false;
  int64_t opset = 0;        // 0: the input's
  std::string report_json;  // "": no report file
  // ort target: timed runs of the original (twice) and the optimized model in ONNX Runtime
  // before writing (0: no guard, -1: kDefaultGuardRuns); a result slower beyond the noise
  // band is not written.
  int guard_runs = -1;
  // ort target: the distinct graphs the guard times (the search's best and its runners-up;
  // -1: kDefaultGuardCandidates).
  int guard_candidates = -1;
  // ort target: the search may introduce ONNX Runtime's fused com.microsoft operators, by the
  // generated and proved rules of shipped_ort_fused_rules() (data_paths.h); the written file
  // then runs in ONNX Runtime only.
  bool ort_contrib_ops = false;
  // A debugging aid: write sampled candidate graphs and their predicted costs here
  // (driver/candidate_samples.h); "": none.
  std::string dump_candidates;
};

// `graphsub optimize --model NAME`: a built-in model, timed on the fast executor.
struct ModelJobOptions {
  SearchJobOptions search;
  std::string model;
  std::string dot_dir;  // "": no DOT files
  int runs = 10;        // timed runs of each graph (0: none)
  std::string report_json;
};

inline constexpr int kDefaultGuardRuns = 15;
inline constexpr int kDefaultGuardCandidates = 3;
inline constexpr int kMaxGuardCandidates = 16;

// Largest --budget accepted without --time-limit: at the default queue an expansion of a
// large model takes up to about a second, so this bounds an unattended run to hours, not
// weeks; with a time limit any budget is fine.
inline constexpr size_t kMaxBudgetWithoutTimeLimit = 1'000'000;
// Largest --threads: beyond this the OpenMP runtime fails or thrashes (issue 20).
int max_threads();

// Throws OptionError naming the flag and the limit. Checks the files too: the input and each
// rule file are readable regular files, the output's folder is writable and the output is not
// the input (same file, whatever the spelling), the report's folder is writable.
void validate(const OnnxJobOptions& o);
void validate(const ModelJobOptions& o);

// "input=1x3x224x224" -> (input, {1,3,224,224}); throws OptionError.
std::pair<std::string, Shape> parse_input_shape(const std::string& spec);
std::map<std::string, Shape> parse_input_shapes(const std::vector<std::string>& specs);
// "seq=128" -> {seq: 128}, for --dim; throws OptionError.
std::map<std::string, int64_t> parse_dim_values(const std::vector<std::string>& specs);

// The options the optimizer takes (cost kind resolved from the name).
opt::OptimizeOptions optimizer_options(const SearchJobOptions& s);

// Throws OptionError "cannot write to FLAG PATH: REASON" unless a file can be created at
// `path` (its folder exists and is writable; `path` is not a folder).
void check_writable_file(const std::string& flag, const std::string& path);
// Throws OptionError "FLAG PATH: cannot open it: REASON" unless `path` is a readable file.
void check_readable_file(const std::string& flag, const std::string& path);

}  // namespace graphsub::driver
