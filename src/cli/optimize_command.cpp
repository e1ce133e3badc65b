// `graphsub optimize --model NAME [flags]`: optimizes a built-in model and prints a summary:
// operator counts, predicted cost and measured run time before and after, the rules applied,
// the search statistics, and the numerical check of the result.
#include "cli/optimize_command.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "cli/commands.h"
#include "cli/onnx_command.h"
#include "cli/terminal_reporter.h"
#include "ir/error.h"
#include "ir/print.h"
#include "models/models.h"
#include "opt/machine_profile.h"
#include "opt/runtime.h"

namespace graphsub {

void add_optimize_flags(CLI::App& cmd, OptimizeCliOptions& o) {
  cmd.add_option("--alpha", o.opt.search.alpha,
                 "keep graphs costing less than alpha x the best so far (1.0: greedy)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 10.0));
  cmd.add_option("--budget", o.opt.search.budget, "graphs the search expands at most")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.add_option("--time-limit", o.opt.search.time_limit_s,
                 "stop the search after this many seconds (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--max-queue", o.opt.search.max_queue, "graphs kept in the search queue at most")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd.add_option("--cost", o.cost, "cost model: analytic (roofline) or measured (oneDNN timings)")
      ->capture_default_str()
      ->check(CLI::IsMember({"analytic", "measured"}));
  cmd.add_option("--cache-dir", o.opt.cache_dir,
                 "where machine profiles and measured cost tables are cached");
  cmd.add_option("--rules", o.opt.rules.rule_files,
                 "rule files to use (default: rules/default.rules and rules/merges.rules)");
  cmd.add_flag(
      "--no-builtin-rules", [&o](int64_t) { o.opt.rules.builtin = false; },
      "do not use the built-in structural rules");
  cmd.add_option("--disable-rule", o.opt.rules.disabled, "do not use the rule of this name")
      ->take_all();
  cmd.add_option("--dot", o.dot_dir, "write the original and optimized graphs as DOT files here");
  cmd.add_option("--threads", o.opt.threads,
                 "OpenMP threads of the fast executor for timings and measured costs (0: all "
                 "cores)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--runs", o.runs, "timed runs of each graph on the fast executor (0: skip)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd.add_flag(
      "--no-check", [&o](int64_t) { o.opt.check = false; },
      "skip the numerical check of the result (not recommended)");
  cmd.add_option("--seed", o.opt.seed, "seed of the check's random inputs")->capture_default_str();
}

namespace {

std::string pct(double before, double after) {
  if (before == 0) return "-";
  return fmt::format("{:+.1f}%", 100.0 * (after - before) / before);
}

void write_dot(const std::string& dir, const std::string& file, const Graph& g,
               const std::string& title) {
  std::filesystem::create_directories(dir);
  std::string path = (std::filesystem::path(dir) / file).string();
  std::ofstream out(path);
  out << to_dot(g, title);
  if (!out) throw Error(fmt::format("cannot write {}", path));
}

}  // namespace

opt::OptimizeResult optimize_and_report(const Graph& g, const std::string& what,
                                        OptimizeCliOptions& o, Reporter& reporter) {
  o.opt.cost = o.cost == "measured" ? opt::CostKind::Measured : opt::CostKind::Analytic;
  auto model = opt::make_cost_model(o.opt, reporter);
  opt::OptimizeResult r = opt::optimize_graph(g, o.opt, *model, reporter);

  fmt::print("optimized {}\n", what);
  fmt::print("cost model: {} ({})\n", r.cost_model, r.assumptions);
  fmt::print("rules: {} in use\n\n", r.rules_loaded);

  auto before = opt::op_counts(g), after = opt::op_counts(r.optimized);
  std::set<std::string> ops;
  for (auto& [k, v] : before) ops.insert(k);
  for (auto& [k, v] : after) ops.insert(k);
  fmt::print("{:<16} {:>8} {:>8}\n", "operator", "before", "after");
  for (auto& op : ops)
    fmt::print("{:<16} {:>8} {:>8}\n", op, before.count(op) ? before[op] : 0,
               after.count(op) ? after[op] : 0);
  fmt::print("{:<16} {:>8} {:>8}\n\n", "total", g.num_ops(), r.optimized.num_ops());

  fmt::print("{:<22} {:>12} {:>12} {:>10}\n", "", "before", "after", "change");
  fmt::print("{:<22} {:>12.1f} {:>12.1f} {:>10}\n", "cost (us, predicted)", r.initial_cost,
             r.final_cost, pct(r.initial_cost, r.final_cost));
  if (o.runs > 0) {
    auto t = opt::time_alternated(g, r.optimized, o.runs, o.opt.threads);
    fmt::print(
        "{:<22} {:>12.3f} {:>12.3f} {:>10}   speedup {:.2f}x (fast executor, median of {} "
        "alternated runs, {} thread(s))\n",
        "run time (ms)", t.a.wall_ms, t.b.wall_ms, pct(t.a.wall_ms, t.b.wall_ms),
        t.a.wall_ms / t.b.wall_ms, o.runs, opt::effective_threads(o.opt.threads));
    fmt::print(
        "{:<22} {:>12.3f} {:>12.3f} {:>10}   speedup {:.2f}x (processor time of the same "
        "runs)\n",
        "run time (CPU ms)", t.a.cpu_ms, t.b.cpu_ms, pct(t.a.cpu_ms, t.b.cpu_ms),
        t.a.cpu_ms / t.b.cpu_ms);
  }
  const auto& s = r.search;
  fmt::print(
      "\nsearch: {} graphs expanded (stopped by {}), {} candidates, {} queued, {} dropped, "
      "peak queue {}, {:.2f} s ({:.2f} s processor time), peak memory {:.0f} MiB\n",
      s.expanded, s.stopped_by, s.generated, s.kept, s.dropped, s.peak_queue, s.seconds,
      s.cpu_seconds, r.peak_rss_mib);
  if (r.rules_applied.empty()) {
    fmt::print("rules applied: none\n");
  } else {
    fmt::print("rules applied ({} applications):\n", s.steps.size());
    for (auto& [rule, n] : r.rules_applied) fmt::print("  {:<36} {:>4}\n", rule, n);
  }
  fmt::print("weights pre-computed: {} operators folded into weights\n", r.folded);
  if (r.checked)
    fmt::print(
        "check: outputs match on random inputs (rtol {:g}; max abs diff {:.3g}, max rel "
        "diff {:.3g}; reference executor, {:.2f} s)\n",
        o.opt.rtol, r.check.max_abs_diff, r.check.max_rel_diff, r.check_seconds);
  else
    fmt::print("check: skipped (--no-check)\n");
  if (!o.dot_dir.empty()) {
    write_dot(o.dot_dir, "original.dot", g, what + " (original)");
    write_dot(o.dot_dir, "optimized.dot", r.optimized, what + " (optimized)");
    fmt::print("graphs written to {}/original.dot and {}/optimized.dot\n", o.dot_dir, o.dot_dir);
  }
  return r;
}

void add_optimize_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand(
      "optimize", "optimize a graph with cost-based search over verified rewrite rules");
  static OptimizeCliOptions o;
  static std::string model;
  cmd->add_option("--model", model,
                  fmt::format("built-in model: {}", fmt::join(model_names(), ", ")));
  add_optimize_flags(*cmd, o);
  static OnnxCliOptions onnx;  // the ONNX form: optimize in.onnx -o out.onnx (onnx_command.h)
  add_onnx_options(*cmd, onnx);
  cmd->callback([&flags] {
    if (!onnx.model.empty()) {
      flags.exit_code = run_onnx_optimize(onnx, o, flags);
      return;
    }
    if (model.empty()) throw Error("optimize: name a graph with --model NAME");
    TerminalReporter reporter(flags.quiet);
    Graph g = build_model(model);
    optimize_and_report(g, "model " + model, o, reporter);
  });
}

}  // namespace graphsub
