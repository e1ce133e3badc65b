#include "driver/optimize_job.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "driver/candidate_samples.h"
#include "driver/data_paths.h"
#include "driver/latency_guard_step.h"
#include "driver/ort_contrib_step.h"
#include "ir/print.h"
#include "models/models.h"
#include "onnx/half_precision.h"
#include "opt/cost/machine_profile.h"
#include "opt/search/bisect.h"
#include "opt/search/search.h"
#include "ort/ort_cost_model.h"
#include "ort/target.h"

namespace graphsub::driver {

namespace {

using Clock = std::chrono::steady_clock;

// Random rewrites among the graphs --dump-candidates writes (with the original, the search's
// path and its finalists): enough to spread the costs beyond the search's own graphs.
constexpr int kDumpedRandomSamples = 6;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The shipped ONNX Runtime worker. Without a data folder the worker's own search
// ($GRAPHSUB_TOOLS_DIR, ./tools) runs, and its error names what is missing.
ort::WorkerOptions worker_options() {
  ort::WorkerOptions w;
  try {
    w.script = ort_worker_script();
  } catch (const Error&) {
  }
  return w;
}

std::map<std::string, std::string> search_options_text(const SearchJobOptions& s) {
  const auto& o = s.opt;
  return {{"alpha", fmt::format("{}", o.search.alpha)},
          {"budget", fmt::format("{}", o.search.budget)},
          {"time_limit", fmt::format("{}", o.search.time_limit_s)},
          {"max_queue", fmt::format("{}", o.search.max_queue)},
          {"target", s.target},
          {"cost", s.cost},
          {"threads", fmt::format("{}", o.threads)},
          {"seed", fmt::format("{}", o.seed)},
          {"rtol", fmt::format("{}", o.tolerance.rtol)},
          {"atol", fmt::format("{}", o.tolerance.atol)},
          {"builtin_rules", s.rules.builtin ? "true" : "false"},
          {"disabled_rules", fmt::format("{}", fmt::join(s.rules.disabled, ","))}};
}

// The first rule application after which the check fails (opt/bisect.h), as
// "RULE at WHERE"; "" when no application is to blame or the steps do not replay.
std::string first_bad_rewrite(const Graph& original, const opt::OptimizeResult& r,
                              const opt::RuleLibrary& lib, CheckOptions check, Reporter& rep) {
  check.runs = 1;
  try {
    auto bad = opt::first_bad_application(original, lib.transforms(), r.search.steps, check, rep);
    return bad ? opt::describe_step(r.search.steps[*bad]) : "";
  } catch (const Error&) {
    return "";
  }
}

std::string mismatch_message(const opt::OptimizeResult& r, const Tolerance& tol,
                             const std::string& bad) {
  std::vector<std::string> rules;
  for (const auto& [rule, n] : r.rules_applied) rules.push_back(rule);
  std::string advice =
      bad.empty()
          ? fmt::format("rules applied: {}; disable them one at a time with {} NAME",
                        fmt::join(rules, ", "), kDisableRuleFlag)
          : fmt::format(
                "the outputs first differ after {}; rerun with {} {} to leave that rule out "
                "(rules applied: {})",
                bad, kDisableRuleFlag, bad.substr(0, bad.find(" at ")), fmt::join(rules, ", "));
  return fmt::format(
      "the optimized model does NOT compute what the original computes (tolerance rtol {} "
      "atol {}); {}. Nothing was written.",
      tol.rtol, tol.atol, advice);
}

// Whether `g` computes what the imported model computes: at the import's shapes and at the
// second value of each symbolic dimension, as the search's choice is checked.
bool passes_checks(const ImportedModel& m, const Graph& g, const CheckOptions& check,
                   Reporter& rep) {
  if (!check_equivalent(m.graph, g, check, rep).ok) return false;
  for (size_t p = 0; p < m.info->symbolic.size(); ++p)
    if (!check_equivalent(m.alt_graphs[p], instantiate_symbolic(g, *m.info, p), check, rep).ok)
      return false;
  return true;
}

void write_dot(const std::string& dir, const std::string& file, const Graph& g,
               const std::string& title) {
  std::filesystem::create_directories(dir);
  std::string path = (std::filesystem::path(dir) / file).string();
  std::ofstream out(path);
  out << to_dot(g, title);
  out.close();
  if (!out) throw Error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
}

}  // namespace

std::unique_ptr<opt::RuleLibrary> load_rule_library(const SearchJobOptions& s, Reporter& rep) {
  return std::make_unique<opt::RuleLibrary>(resolved(s.rules), rep);
}

OnnxJobResult run_onnx_job(const OnnxJobOptions& given, const std::string* model_bytes,
                           const opt::RuleLibrary& lib, Reporter& rep, OnnxJobObserver& observer) {
  validate(given);
  OnnxJobOptions o = given;  // the check's tolerances follow the model's element type
  OnnxJobResult out;
  Report& report = out.report;
  report.job = "onnx";
  report.options = search_options_text(o.search);
  report.options["check"] = fmt::format("{}", o.check_runs);
  report.options["check_executor"] = o.check_executor;
  report.options["input_shapes"] = fmt::format("{}", fmt::join(o.input_shapes, ","));
  report.options["dims"] = fmt::format("{}", fmt::join(o.dims, ","));
  report.options["opset"] = fmt::format("{}", o.opset);

  ImportOptions io;
  io.input_shapes = parse_input_shapes(o.input_shapes);
  io.dim_values = parse_dim_values(o.dims);
  auto t = Clock::now();
  ImportedModel m = model_bytes ? import_onnx_bytes(*model_bytes, "", io, rep)
                                : import_onnx_file(o.input, io, rep);
  report.seconds["import"] = seconds_since(t);
  Tolerance& tol = o.search.opt.tolerance;
  tolerances_for_type(m.info->float_type, tol.rtol, tol.atol);
  report.options["rtol"] = fmt::format("{}", tol.rtol);
  report.options["atol"] = fmt::format("{}", tol.atol);
  report.opset = m.info->opset();
  report.onnx_ops_before = m.summary.onnx_op_counts;
  report.opaque = m.summary.opaque;
  report.removed = m.summary.removed;
  report.import_notes = m.summary.notes;
  observer.imported(m);

  // The runtime the model is optimized for: ONNX Runtime by default, priced by its own
  // kernel times; graphsub's oneDNN executor when asked, or when ONNX Runtime is missing.
  ort::Target target = ort::open_target(o.search.target, worker_options());
  report.options["target"] = target.name;
  report.options["ort_contrib_ops"] = o.ort_contrib_ops ? "true" : "false";
  if (o.ort_contrib_ops && !target.worker)
    throw Error(fmt::format("--ort-contrib-ops: {}", target.fallback));
  if (!target.fallback.empty()) {
    report.import_notes.push_back(target.fallback);
    rep.warn(target.fallback);
  }
  // The ONNX job runs its own check (below): it handles opaque nodes and several runs.
  opt::OptimizeOptions opts = optimizer_options(o.search);
  opts.check = false;
  bool guarded = target.worker && o.guard_runs != 0;
  // The guard times the few best distinct graphs: the search keeps them.
  if (guarded)
    opts.search.finalists =
        static_cast<size_t>(o.guard_candidates < 0 ? kDefaultGuardCandidates : o.guard_candidates);
  std::unique_ptr<opt::CostModel> cost;
  if (target.worker) {
    report.options["cost"] = "ort";
    cost = std::make_unique<ort::OrtCostModel>(
        *target.worker, opts.cache_dir.empty() ? opt::default_cache_dir() : opts.cache_dir, 1, rep);
  } else {
    cost = opt::make_cost_model(opts, rep);
  }
  report.result = opt::optimize_graph(m.graph, opts, lib, *cost, rep);
  const opt::OptimizeResult& r = report.result;
  report.ops_before = opt::op_counts(m.graph);
  report.ops_after = opt::op_counts(r.optimized);
  observer.optimized(m.graph, r);

  CheckOptions check{.runs = o.check_runs,
                     .seed = opts.seed,
                     .tolerance = opts.tolerance,
                     .executor = o.check_executor == "reference" ? CheckExecutor::Reference
                                                                 : CheckExecutor::Onednn};
  if (o.check_runs > 0 && o.search.opt.check) {
    t = Clock::now();
    rep.progress("check", 0, 0, "running both models on random inputs");
    report.check = check_equivalent(m.graph, r.optimized, check, rep);
    report.seconds["check"] = seconds_since(t);
    observer.checked(*report.check, m.graph, report.seconds["check"], "");
    if (!report.check->ok) {
      out.failure =
          mismatch_message(r, opts.tolerance, first_bad_rewrite(m.graph, r, lib, check, rep));
      return out;
    }
    // The written model keeps the symbolic dimensions: the check runs again at the other
    // value of each (the model imported there against the optimized graph instantiated
    // there); a graph that fixed a dimension's value fails here rather than when run.
    for (size_t p = 0; p < m.info->symbolic.size(); ++p) {
      const SymbolicDim& d = m.info->symbolic[p];
      std::string at = fmt::format("{}={}", d.name, d.alt);
      t = Clock::now();
      ResultCheck alt = check_equivalent(m.alt_graphs[p],
                                         instantiate_symbolic(r.optimized, *m.info, p), check, rep);
      report.seconds["check " + at] = seconds_since(t);
      observer.checked(alt, m.alt_graphs[p], report.seconds["check " + at], at);
      bool ok = alt.ok;
      report.symbolic_checks.emplace_back(at, std::move(alt));
      if (!ok) {
        out.failure = fmt::format(
            "at {} the optimized model does NOT compute what the original computes; optimize "
            "at that value with --dim or --input-shape. Nothing was written.",
            at);
        return out;
      }
    }
  } else {
    observer.check_skipped();
  }

  ExportOptions eo;
  eo.external_data = o.external_data;
  eo.opset = o.opset;
  if (!o.dump_candidates.empty()) {
    size_t n =
        dump_candidates(o.dump_candidates, m, r, lib, *cost, kDumpedRandomSamples, opts.seed, eo);
    rep.progress("dump", 0, 0, fmt::format("{} candidate graphs in {}", n, o.dump_candidates));
  }
  const Graph* written = &r.optimized;
  if (guarded) {
    t = Clock::now();
    std::vector<GuardCandidate> cands = {{&r.optimized, r.final_cost / 1e3}};
    for (const opt::RunnerUp& u : r.runners_up) cands.push_back({&u.graph, u.cost / 1e3});
    GuardStep g = run_latency_guard(*target.worker, m, cands, r.initial_cost / 1e3, o.input,
                                    model_bytes, eo, o.guard_runs, rep);
    report.seconds["guard"] = seconds_since(t);
    if (!g.note.empty()) report.import_notes.push_back(g.note);
    report.guard = g.result;
    written = g.write_original ? &m.graph : cands[static_cast<size_t>(g.chosen)].graph;
    // A runner-up is written only after it passes the same checks as the search's choice
    // (checked here, not before timing: most runs write the search's choice, and checking
    // every runner-up doubled the guard's time); one that fails is not written, and said.
    if (!g.write_original && g.chosen > 0 && o.check_runs > 0 && o.search.opt.check) {
      t = Clock::now();
      if (!passes_checks(m, *written, check, rep)) {
        // Then the search's choice, unless it timed slower than the original beyond noise.
        const ort::GuardResult& gr = *report.guard;
        bool first_slower = gr.candidates[0].median_ms > gr.original_ms * (1 + gr.noise);
        std::string why = fmt::format(
            "the runner-up the latency guard timed fastest does not compute what the original "
            "computes; {} is written instead",
            first_slower ? "the original" : "the search's choice");
        rep.warn(why);
        report.import_notes.push_back(why);
        report.guard->chosen = first_slower ? -1 : 0;
        report.guard->verdict += "; " + why;
        written = first_slower ? &m.graph : &r.optimized;
      }
      report.seconds["guard check"] = seconds_since(t);
    }
    if (report.guard) observer.guarded(*report.guard);
  }
  t = Clock::now();
  std::optional<std::string> fused;  // the model with ONNX Runtime's operators, when written
  if (o.ort_contrib_ops) {
    ExportOptions inline_eo = eo;
    inline_eo.external_data = false;
    std::string bytes;
    try {
      bytes = export_onnx_bytes(*written, m.info.get(), inline_eo);
    } catch (const Error& e) {  // over protobuf's 2 GiB: the fusion works on one message
      report.contrib = ContribStep{
          .verdict = fmt::format("--ort-contrib-ops skipped: the model cannot be held as "
                                 "one message ({}); it is written without them",
                                 e.what())};
      rep.warn(report.contrib->verdict);
    }
    if (!bytes.empty()) {
      ort::CompareOptions c{.sets = std::max(1, o.check_runs),
                            .seed = opts.seed,
                            .rtol = opts.tolerance.rtol,
                            .atol = opts.tolerance.atol};
      // Symbolic dimensions are checked at a second value too, as the graphsub check does.
      std::vector<int64_t> dims = {1};
      if (!m.info->symbolic.empty()) dims.push_back(m.info->symbolic[0].alt);
      report.contrib = run_ort_contrib_step(*target.worker, bytes, c, dims, o.guard_runs, rep);
      if (report.contrib->written) fused = std::move(bytes);
    }
    report.seconds["contrib"] = seconds_since(t);
    observer.contrib(*report.contrib);
    t = Clock::now();
  }
  if (o.output.empty()) {
    out.model_bytes = fused ? std::move(*fused) : export_onnx_bytes(*written, m.info.get(), eo);
    report.onnx_ops_after = onnx_node_counts(out.model_bytes);
  } else {
    if (fused)
      write_onnx_bytes(*fused, m.info.get(), o.output, eo);
    else
      export_onnx_file(*written, m.info.get(), o.output, eo);
    report.onnx_ops_after = onnx_file_node_counts(o.output);
  }
  report.seconds["export"] = seconds_since(t);
  return out;
}

Report run_model_job(const ModelJobOptions& o, const opt::RuleLibrary& lib, Reporter& rep) {
  validate(o);
  Report report;
  report.job = "model";
  report.options = search_options_text(o.search);
  report.options["model"] = o.model;
  report.options["check"] = o.search.opt.check ? "true" : "false";
  Graph g = build_model(o.model);
  opt::OptimizeOptions opts = optimizer_options(o.search);
  auto cost = opt::make_cost_model(opts, rep);
  report.result = opt::optimize_graph(g, opts, lib, *cost, rep);
  const opt::OptimizeResult& r = report.result;
  report.ops_before = opt::op_counts(g);
  report.ops_after = opt::op_counts(r.optimized);
  report.model_checked = r.checked;
  if (o.runs > 0) {
    report.measured = opt::time_alternated(g, r.optimized, o.runs, opts.threads);
    report.measured_runs = o.runs;
    report.measured_threads = opt::effective_threads(opts.threads);
  }
  if (!o.dot_dir.empty()) {
    std::string what = "model " + o.model;
    write_dot(o.dot_dir, "original.dot", g, what + " (original)");
    write_dot(o.dot_dir, "optimized.dot", r.optimized, what + " (optimized)");
  }
  return report;
}

}  // namespace graphsub::driver
