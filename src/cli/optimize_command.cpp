// `graphsub optimize`: binds the flags to the driver's option structs (driver/optimize_options.h)
// and runs one of its two jobs: the ONNX form `optimize in.onnx -o out.onnx` (import, optimize,
// check, export) or the built-in model form `optimize --model NAME`. A flag of the other form
// is an error, not silently ignored.
#include <fmt/format.h>

#include <memory>

#include "cli/commands.h"
#include "cli/optimize_output.h"
#include "cli/terminal_reporter.h"
#include "driver/optimize_job.h"
#include "models/models.h"
#include "onnx/onnx_model.h"

namespace graphsub {

namespace {

struct OptimizeCommandOptions {
  driver::SearchJobOptions search;
  driver::OnnxJobOptions onnx;
  driver::ModelJobOptions model;
  std::string report_json;
  // Flags that only one form uses, to reject them in the other.
  std::vector<CLI::Option*> onnx_only, model_only;
};

void add_search_flags(CLI::App& cmd, driver::SearchJobOptions& s) {
  auto& o = s.opt;
  cmd.add_option("--alpha", o.search.alpha,
                 "keep graphs costing less than alpha x the best so far (1.0: greedy, at most 10)")
      ->capture_default_str();
  cmd.add_option("--budget", o.search.budget,
                 fmt::format("graphs the search expands at most (at most {} without --time-limit)",
                             driver::kMaxBudgetWithoutTimeLimit))
      ->capture_default_str();
  cmd.add_option("--time-limit", o.search.time_limit_s,
                 "stop the search after this many seconds (0: no limit)")
      ->capture_default_str();
  cmd.add_option("--max-queue", o.search.max_queue, "graphs kept in the search queue at most")
      ->capture_default_str();
  cmd.add_option("--target", s.target,
                 fmt::format("runtime whose costs are optimized: {} (default: ort for ONNX "
                             "models, falling back to onednn where no ONNX Runtime (Python or "
                             "Node.js package) can be started; onednn for built-in models)",
                             fmt::join(driver::cost_targets(), ", ")));
  cmd.add_option("--cost", s.cost,
                 "--target onednn's cost model: analytic (roofline, the default) or measured "
                 "(oneDNN timings)")
      ->check(CLI::IsMember({"analytic", "measured"}));
  cmd.add_option("--cache-dir", o.cache_dir,
                 "where machine profiles and measured cost tables are cached");
  cmd.add_option("--rules", s.rules.rule_files,
                 "rule files to use (default: rules/default.rules, rules/merges.rules, "
                 "rules/activations.rules and rules/indexing.rules)");
  cmd.add_flag(
      "--no-builtin-rules", [&s](int64_t) { s.rules.builtin = false; },
      "do not use the built-in structural rules");
  cmd.add_option("--disable-rule", s.rules.disabled,
                 "do not use the rule of this name (an equality's name: both directions; "
                 "NAME~rev: its right-to-left one alone)")
      ->take_all();
  cmd.add_option("--threads", o.threads,
                 "OpenMP threads of the fast executor for the cost model, timings and measured "
                 "costs (0: all cores)")
      ->capture_default_str();
  cmd.add_flag(
      "--no-check", [&o](int64_t) { o.check = false; },
      "skip the numerical check of the result (not recommended)");
  cmd.add_option("--seed", o.seed, "seed of the check's random inputs")->capture_default_str();
  cmd.add_option("--rtol", o.tolerance.rtol,
                 "relative tolerance of the check: |opt - orig| <= atol * max(1, max|orig|) + "
                 "rtol * |orig| per output")
      ->capture_default_str();
  cmd.add_option("--atol", o.tolerance.atol,
                 "absolute tolerance of the check, scaled by the output's largest magnitude")
      ->capture_default_str();
}

void add_onnx_flags(CLI::App& cmd, OptimizeCommandOptions& c) {
  auto& o = c.onnx;
  cmd.add_option("file", o.input, "ONNX model to optimize (in.onnx); writes -o OUT.onnx");
  c.onnx_only = {
      cmd.add_option("-o,--output", o.output, "where to write the optimized ONNX model"),
      cmd.add_option("--check", o.check_runs,
                     "random input sets on which the optimized model is compared with the "
                     "original (0: no check)"),
      cmd.add_option("--check-executor", o.check_executor,
                     "executor of the check: onednn (fast) or reference (the reference kernels)")
          ->check(CLI::IsMember({"onednn", "reference"})),
      cmd.add_option("--input-shape", o.input_shapes,
                     "shape for an input with symbolic dimensions, NAME=1x3x224x224 (repeatable)"),
      cmd.add_option("--dim", o.dims,
                     "value of a symbolic dimension, by its name, for every input that has it "
                     "(NAME=VALUE, e.g. seq=128; repeatable; default 2): the optimization runs "
                     "at it, the written model keeps the dimension symbolic"),
      cmd.add_flag("--external-data", o.external_data,
                   "write the weights to OUT.onnx.data (automatic above 1 GiB)"),
      cmd.add_option("--opset", o.opset, "opset of the written model (default: the input's)"),
      cmd.add_option("--guard-runs", o.guard_runs,
                     fmt::format("--target ort: timed runs of the original (twice) and the "
                                 "optimized model in ONNX Runtime before writing; a result slower "
                                 "beyond the noise band is not written (0: no guard; default {}, "
                                 "fewer, down to 5, where "
                                 "that would take more than about 12 s)",
                                 driver::kDefaultGuardRuns)),
      cmd.add_option(
          "--guard-candidates", o.guard_candidates,
          fmt::format("--target ort: distinct graphs the guard times, the search's best "
                      "and its runners-up; the fastest beyond the noise band is written "
                      "(default {}; with the default runs, fewer runners-up where 5 runs "
                      "of each file would take more than about 12 s)",
                      driver::kDefaultGuardCandidates)),
      cmd.add_flag("--ort-contrib-ops", o.ort_contrib_ops,
                   "--target ort: let the search introduce ONNX Runtime's fused com.microsoft "
                   "operators (multi-head attention, skip normalizations, ...) by the generated "
                   "rules of rules/ort_fused.rules and rules/ort_attention.rules (and ONNX's "
                   "Attention over grouped key/value heads, rules/onnx_attention.rules, in a file "
                   "of opset 23 or later: see --opset); the file then runs in ONNX Runtime only"),
      cmd.add_option(
          "--dump-candidates", o.dump_candidates,
          "debugging: write sampled candidate graphs (the search's path, finalists, "
          "random rewrites) and their predicted costs (candidates.json) to this folder")};
}

void add_model_flags(CLI::App& cmd, OptimizeCommandOptions& c) {
  auto& o = c.model;
  c.model_only = {
      cmd.add_option("--model", o.model,
                     fmt::format("built-in model: {}", fmt::join(model_names(), ", "))),
      cmd.add_option("--dot", o.dot_dir,
                     "write the original and optimized graphs as DOT files here (--model only)"),
      cmd.add_option("--runs", o.runs,
                     "timed runs of each graph on the fast executor (0: skip; --model only)")
          ->capture_default_str()};
}

// A flag of the other form: an error naming it and the form it belongs to.
void reject_given(const std::vector<CLI::Option*>& flags, const std::string& why) {
  for (const CLI::Option* f : flags)
    if (f->count() > 0)
      throw driver::OptionError(fmt::format("{} {}", f->get_name(false, true), why));
}

int run_onnx(OptimizeCommandOptions& c, bool quiet) {
  reject_given({c.model_only[1], c.model_only[2]},
               "applies to the built-in models (--model NAME) only, not to an ONNX file");
  driver::OnnxJobOptions o = c.onnx;
  o.search = c.search;
  o.report_json = c.report_json;
  if (o.output.empty()) throw Error("optimize: give the output file with -o OUT.onnx");
  driver::validate(o);  // before the rule library is read
  TerminalReporter rep(quiet);
  auto lib = driver::load_rule_library(o.search, rep, o.ort_contrib_ops);
  OnnxJobPrinter printer(o.input, quiet);
  driver::OnnxJobResult r = driver::run_onnx_job(o, nullptr, *lib, rep, printer);
  if (!o.report_json.empty()) driver::write_report_json(r.report, o.report_json);
  if (!r.failure.empty()) {
    fmt::print(stderr, "error: {}\n", r.failure);
    return 1;
  }
  print_written(o.output, r.report, quiet);
  return 0;
}

void run_model(OptimizeCommandOptions& c, bool quiet) {
  reject_given(c.onnx_only, "applies to ONNX files only, not to a built-in model (--model NAME)");
  driver::ModelJobOptions o = c.model;
  o.search = c.search;
  o.report_json = c.report_json;
  driver::validate(o);
  TerminalReporter rep(quiet);
  auto lib = driver::load_rule_library(o.search, rep);
  driver::Report r = driver::run_model_job(o, *lib, rep);
  print_model_report(r, o);
  if (!o.report_json.empty()) driver::write_report_json(r, o.report_json);
}

}  // namespace

void add_optimize_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand(
      "optimize", "optimize a graph with cost-based search over verified rewrite rules");
  auto c = std::make_shared<OptimizeCommandOptions>();
  add_model_flags(*cmd, *c);
  add_search_flags(*cmd, c->search);
  add_onnx_flags(*cmd, *c);
  cmd->add_option("--report-json", c->report_json,
                  "write what was done as JSON: operators before and after, rules applied, "
                  "costs, search statistics, check results (docs/python.md)");
  cmd->callback([c, &flags] {
    if (!c->onnx.input.empty()) {
      if (c->model_only[0]->count() > 0)
        throw driver::OptionError("optimize: give an ONNX file or --model NAME, not both");
      flags.exit_code = run_onnx(*c, flags.quiet);
      return;
    }
    if (c->model.model.empty()) throw Error("optimize: name a graph with --model NAME");
    run_model(*c, flags.quiet);
  });
}

}  // namespace graphsub
