// `graphsub optimize in.onnx -o out.onnx`: import, optimize, check, export, with a summary
// of what was imported, what changed, and what the check compared.
#include "cli/onnx_command.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "cli/terminal_reporter.h"
#include "ir/error.h"
#include "models/models.h"
#include "onnx/onnx_model.h"
#include "onnx/result_check.h"
#include "opt/rule_library.h"
#include "opt/search.h"

namespace graphsub {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// "input=1x3x224x224"
std::pair<std::string, Shape> parse_input_shape(const std::string& spec) {
  auto eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw Error(
        fmt::format("--input-shape '{}': expected NAME=DxDx..., e.g. input=1x3x224x224", spec));
  Shape s;
  std::string dims = spec.substr(eq + 1);
  size_t k = 0;
  while (k <= dims.size()) {
    size_t x = dims.find('x', k);
    if (x == std::string::npos) x = dims.size();
    std::string d = dims.substr(k, x - k);
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos || d.size() > 12)
      throw Error(fmt::format("--input-shape '{}': '{}' is not a dimension", spec, d));
    s.push_back(std::stoll(d));
    k = x + 1;
  }
  return {spec.substr(0, eq), s};
}

void print_import_summary(const std::string& path, const ImportedModel& m, bool quiet) {
  if (quiet) return;
  const auto& s = m.summary;
  int64_t nodes = 0;
  for (const auto& [op, n] : s.onnx_op_counts) nodes += n;
  fmt::print("imported {}: opset {}, {} ONNX nodes -> {} graphsub operators", path, m.info->opset(),
             nodes, m.graph.num_ops());
  if (!m.info->producer_name.empty())
    fmt::print(" (from {}{})", m.info->producer_name,
               m.info->producer_version.empty() ? "" : " " + m.info->producer_version);
  fmt::print("\n");
  if (s.removed)
    fmt::print("  removed {} Identity/Dropout node{}\n", s.removed, s.removed == 1 ? "" : "s");
  if (s.opaque.empty()) {
    fmt::print("  opaque nodes: none (every operator has graphsub semantics)\n");
  } else {
    fmt::print("  opaque nodes ({}): kept as they are; the optimizer works around them\n",
               s.opaque.size());
    for (const auto& line : opaque_summary_lines(s)) fmt::print("    {}\n", line);
  }
  if (s.folded)
    fmt::print("  shape computations evaluated at import: {} node{}\n", s.folded,
               s.folded == 1 ? "" : "s");
  for (const auto& n : s.notes) fmt::print("  note: {}\n", n);
}

void print_changes(const Graph& before, const opt::OptimizeResult& r, bool quiet) {
  if (quiet) return;
  auto a = opt::op_counts(before), b = opt::op_counts(r.optimized);
  std::set<std::string> ops;
  for (const auto& [op, n] : a) ops.insert(op);
  for (const auto& [op, n] : b) ops.insert(op);
  fmt::print("{:<16} {:>8} {:>8}\n", "operator", "before", "after");
  size_t ta = 0, tb = 0;
  for (const auto& op : ops) {
    size_t x = a.count(op) ? a.at(op) : 0, y = b.count(op) ? b.at(op) : 0;
    ta += x;
    tb += y;
    fmt::print("{:<16} {:>8} {:>8}{}\n", op, x, y, x == y ? "" : "  *");
  }
  fmt::print("{:<16} {:>8} {:>8}\n", "total", ta, tb);
  fmt::print("cost ({}): {:.1f} us -> {:.1f} us ({:.3f}x)\n", r.cost_model, r.initial_cost,
             r.final_cost, r.final_cost > 0 ? r.initial_cost / r.final_cost : 1.0);
  fmt::print("  cost model assumed: {}\n", r.assumptions);
  fmt::print("search: {} graphs expanded, {} kept, {:.2f} s, stopped by {}\n", r.search.expanded,
             r.search.kept, r.search.seconds, r.search.stopped_by);
  if (r.rules_applied.empty()) {
    fmt::print("rules applied: none\n");
  } else {
    std::vector<std::string> parts;
    for (const auto& [rule, n] : r.rules_applied) parts.push_back(fmt::format("{} x{}", rule, n));
    fmt::print("rules applied: {}\n", fmt::join(parts, ", "));
  }
  if (r.folded) fmt::print("weights pre-computed: {} operators\n", r.folded);
}

// Outputs one line each; cuts at opaque nodes grouped by op type (mismatches also alone).
void print_check(const ResultCheck& rc, const Graph& original, double secs, bool quiet) {
  if (quiet && rc.ok) return;
  fmt::print("check ({} executor, {:.1f} s): {}\n", rc.executor, secs, rc.scope());
  for (const auto& line : cut_summary_lines(rc, original)) fmt::print("  cuts at {}\n", line);
  for (const auto& t : rc.tensors) {
    if (t.boundary && t.ok && !t.nonfinite) continue;
    fmt::print("  {} '{}': max abs diff {:.3g}, max rel diff {:.3g} (scale {:.3g}) {}\n",
               t.boundary ? "cut" : "output", t.name, t.max_abs, t.max_rel, t.max_ref,
               t.ok ? "ok" : "MISMATCH");
    if (t.nonfinite)
      fmt::print(
          "    warning: {} values of the original are NaN or infinite on these inputs; "
          "those were only compared for equality\n",
          t.nonfinite);
  }
}

// The first rule application after which the check fails (binary search over replayed
// prefixes of the search's steps), as "RULE at WHERE"; "" when it cannot be found.
std::string first_bad_application(const Graph& original, const opt::OptimizeResult& r,
                                  const opt::OptimizeOptions& opts, const OnnxCliOptions& o,
                                  CheckExecutor ex) {
  const auto& steps = r.search.steps;
  if (steps.empty()) return "";
  try {
    opt::RuleLibrary lib(opts.rules, null_reporter());
    auto graphs = opt::replay_steps(original, lib.transforms(), steps, steps.size());
    size_t lo = 0, hi = graphs.size() - 1;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (check_results(original, graphs[mid], 1, opts.seed, o.rtol, o.atol, ex).ok)
        lo = mid + 1;
      else
        hi = mid;
    }
    return fmt::format("{} at {}", steps[lo].rule, steps[lo].where);
  } catch (const Error&) {
    return "";
  }
}

}  // namespace

void add_onnx_options(CLI::App& cmd, OnnxCliOptions& o) {
  cmd.add_option("file", o.model, "ONNX model to optimize (in.onnx); writes -o OUT.onnx");
  cmd.add_option("-o,--output", o.output, "where to write the optimized ONNX model");
  cmd.add_option("--check", o.check_runs,
                 "random input sets on which the optimized model is compared with the original "
                 "(0: no check)")
      ->check(CLI::Range(0, 1000));
  cmd.add_option("--check-executor", o.check_executor,
                 "executor of the check: onednn (fast) or reference (the reference kernels)")
      ->check(CLI::IsMember({"onednn", "reference"}));
  cmd.add_option("--rtol", o.rtol, "relative tolerance of the check");
  cmd.add_option("--atol", o.atol,
                 "absolute tolerance of the check, scaled by the output's largest magnitude");
  cmd.add_option("--input-shape", o.input_shapes,
                 "shape for an input with symbolic dimensions, NAME=1x3x224x224 (repeatable)");
  cmd.add_flag("--external-data", o.external_data,
               "write the weights to OUT.onnx.data (automatic above 1 GiB)");
  cmd.add_option("--opset", o.opset, "opset of the written model (default: the input's)")
      ->check(CLI::Range(kMinOnnxOpset, kMaxOnnxOpset));
}

int run_onnx_optimize(const OnnxCliOptions& o_in, const OptimizeCliOptions& flags_opt,
                      GlobalFlags& flags) {
  OnnxCliOptions o = o_in;
  opt::OptimizeOptions opts = flags_opt.opt;
  opts.cost = flags_opt.cost == "measured" ? opt::CostKind::Measured : opt::CostKind::Analytic;
  if (!opts.check) o.check_runs = 0;  // --no-check
  if (o.output.empty()) throw Error("optimize: give the output file with -o OUT.onnx");
  if (std::filesystem::path(o.output) == std::filesystem::path(o.model))
    throw Error("optimize: the output file must differ from the input file");
  TerminalReporter rep(flags.quiet);
  ImportOptions io;
  for (const auto& spec : o.input_shapes) {
    auto [name, shape] = parse_input_shape(spec);
    io.input_shapes[name] = shape;
  }
  ImportedModel m = import_onnx_file(o.model, io, rep);
  print_import_summary(o.model, m, flags.quiet);

  // The ONNX form runs its own check (below): it handles opaque nodes and several runs.
  opts.check = false;
  auto cost = opt::make_cost_model(opts, rep);
  opt::OptimizeResult r = opt::optimize_graph(m.graph, opts, *cost, rep);
  print_changes(m.graph, r, flags.quiet);

  CheckExecutor ex =
      o.check_executor == "reference" ? CheckExecutor::Reference : CheckExecutor::Onednn;
  if (o.check_runs > 0) {
    auto t = Clock::now();
    rep.progress("check", 0, 0, "running both models on random inputs");
    ResultCheck rc =
        check_results(m.graph, r.optimized, o.check_runs, opts.seed, o.rtol, o.atol, ex);
    print_check(rc, m.graph, seconds_since(t), flags.quiet);
    if (!rc.ok) {
      std::string bad = first_bad_application(m.graph, r, opts, o, ex);
      std::vector<std::string> rules;
      for (const auto& [rule, n] : r.rules_applied) rules.push_back(rule);
      std::string advice =
          bad.empty()
              ? fmt::format("rules applied: {}; disable them one at a time with {} NAME",
                            fmt::join(rules, ", "), kDisableRuleFlag)
              : fmt::format(
                    "the outputs first differ after {}; rerun with {} {} to "
                    "leave that rule out (rules applied: {})",
                    bad, kDisableRuleFlag, bad.substr(0, bad.find(" at ")), fmt::join(rules, ", "));
      fmt::print(stderr,
                 "error: the optimized model does NOT compute what the original computes "
                 "(tolerance rtol {} atol {}); {}. Nothing was written.\n",
                 o.rtol, o.atol, advice);
      return 1;
    }
    // The written model keeps the symbolic dimensions: the check runs again at the other
    // value of each (the model imported there against the optimized graph instantiated
    // there); a graph that fixed a dimension's value fails here rather than when run.
    for (size_t p = 0; p < m.info->symbolic.size(); ++p) {
      const SymbolicDim& d = m.info->symbolic[p];
      auto t2 = Clock::now();
      ResultCheck alt =
          check_results(m.alt_graphs[p], instantiate_symbolic(r.optimized, *m.info, p),
                        o.check_runs, opts.seed, o.rtol, o.atol, ex);
      if (!flags.quiet) fmt::print("at {}={}: ", d.name, d.alt);
      print_check(alt, m.alt_graphs[p], seconds_since(t2), flags.quiet);
      if (!alt.ok) {
        fmt::print(stderr,
                   "error: at {}={} the optimized model does NOT compute what the original "
                   "computes; optimize at that value with --input-shape. Nothing was written.\n",
                   d.name, d.alt);
        return 1;
      }
    }
  } else if (!flags.quiet) {
    fmt::print(
        "check: skipped (--check 0); the optimized model was not compared with the original\n");
  }

  ExportOptions eo;
  eo.external_data = o.external_data;
  eo.opset = o.opset;
  export_onnx_file(r.optimized, m.info.get(), o.output, eo);
  if (!flags.quiet) {
    auto size = std::filesystem::file_size(o.output);
    std::string data = o.output + ".data";
    bool external = std::filesystem::exists(data);
    fmt::print("wrote {} ({:.1f} MB{}), onnx::checker ok\n", o.output,
               static_cast<double>(size) / 1e6,
               external ? fmt::format(", weights in {}", data) : "");
  }
  return 0;
}

void add_export_onnx_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand("export-onnx", "write a built-in model as an ONNX file");
  static std::string model, output;
  static int64_t opset = 17;
  static bool external = false;
  cmd->add_option("--model", model,
                  fmt::format("built-in model: {}", fmt::join(model_names(), ", ")))
      ->required();
  cmd->add_option("-o,--output", output, "the ONNX file to write")->required();
  cmd->add_option("--opset", opset, "opset of the written model")
      ->capture_default_str()
      ->check(CLI::Range(kMinOnnxOpset, kMaxOnnxOpset));
  cmd->add_flag("--external-data", external, "write the weights to OUT.onnx.data");
  cmd->callback([&flags] {
    Graph g = build_model(model);
    ExportOptions eo;
    eo.opset = opset;
    eo.external_data = external;
    export_onnx_file(g, nullptr, output, eo);
    if (!flags.quiet)
      fmt::print("wrote {} ({} operators, opset {}), onnx::checker ok\n", output, g.num_ops(),
                 opset);
  });
}

std::vector<std::string> expand_onnx_short_form(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto is_onnx = [](const std::string& s) {
    return s.size() > 5 && s.compare(s.size() - 5, 5, ".onnx") == 0 && s[0] != '-';
  };
  size_t i = 0;  // global flags (-q) may come first
  while (i < args.size() && (args[i] == "-q" || args[i] == "--quiet")) ++i;
  if (args.size() >= i + 2 && is_onnx(args[i]) && is_onnx(args[i + 1])) {
    std::vector<std::string> expanded(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(i));
    for (const char* s : {"optimize", args[i].c_str(), "-o", args[i + 1].c_str()})
      expanded.emplace_back(s);
    expanded.insert(expanded.end(), args.begin() + static_cast<std::ptrdiff_t>(i + 2), args.end());
    args = std::move(expanded);
  }
  std::reverse(args.begin(), args.end());
  return args;
}

}  // namespace graphsub
