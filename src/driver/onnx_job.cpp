// The ONNX job as a pipeline of named steps: import, open the target, search (with the
// optimizer's check at the import's shapes), check at the other value of each symbolic
// dimension, dump candidates, the latency guard, ONNX Runtime's fused operators, write.
// Each step reads and fills the job's state; one that fails the model sets the failure and
// the pipeline stops before anything is written.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "driver/candidate_samples.h"
#include "driver/data_paths.h"
#include "driver/job_support.h"
#include "driver/latency_guard_step.h"
#include "driver/nchwc_layout_step.h"
#include "driver/opset_held_back.h"
#include "driver/optimize_job.h"
#include "driver/scratch_dir.h"
#include "opt/cost/machine_profile.h"
#include "opt/search/bisect.h"
#include "opt/search/search.h"
#include "ort/ort_cost_model.h"
#include "ort/runtime_compare.h"
#include "ort/skip_norm_lowering.h"
#include "ort/target.h"

namespace graphsub::driver {

namespace {

// Random rewrites among the graphs --dump-candidates writes (with the original, the search's
// path and its finalists): enough to spread the costs beyond the search's own graphs.
constexpr int kDumpedRandomSamples = 6;

// The shipped ONNX Runtime worker (driver/data_paths.h picks which). Without a data folder
// the script stays empty and the worker's error says what is missing.
ort::WorkerOptions worker_options() {
  ort::WorkerOptions w;
  OrtWorkerCommand c;
  try {
    c = ort_worker_command();
  } catch (const Error& e) {
    if (std::getenv("GRAPHSUB_ORT_WORKER")) throw;  // a bad choice is the user's error
    return w;
  }
  w.interpreter = c.interpreter;
  w.script = c.script;
  return w;
}

std::string mismatch_message(const opt::OptimizeResult& r, const Tolerance& tol) {
  std::string bad = r.first_bad_step ? opt::describe_step(r.search.steps[*r.first_bad_step]) : "";
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

class OnnxJob {
 public:
  OnnxJob(const OnnxJobOptions& o, const std::string* model_bytes, const opt::RuleLibrary& lib,
          Reporter& rep, OnnxJobObserver& observer)
      : o_(o), bytes_(model_bytes), lib_(lib), rep_(rep), observer_(observer) {}

  OnnxJobResult run() {
    import_model();
    open_target();
    search();
    // With the latency guard, only the graph to be written is checked (the input as given,
    // the usual outcome, needs none: Whisper's encoder spent 23 s checking a rewrite that
    // was then not written); without it, the search's choice is checked before anything else.
    if (!guarded_ && (!checked_at_import_shapes() || !checked_at_other_values()))
      return std::move(out_);
    if (guarded_) holds_at_other_values();
    dump_candidates();
    choose_by_latency();
    if (guarded_ && !checked_as_written()) return std::move(out_);
    checked_in_runtime();
    write();
    return std::move(out_);
  }

 private:
  bool checking() const { return o_.check_runs > 0 && o_.search.opt.check; }
  const opt::OptimizeResult& result() const { return report().result; }
  Report& report() { return out_.report; }
  const Report& report() const { return out_.report; }
  CheckOptions check_options() const {
    return {.runs = o_.check_runs,
            .seed = opts_.seed,
            .tolerance = opts_.tolerance,
            .executor = opts_.check_executor};
  }

  // The model read, with the options that describe the run; the check's tolerances follow
  // the model's element type.
  void import_model() {
    Report& rp = report();
    rp.job = "onnx";
    rp.options = search_options_text(o_.search);
    rp.options["check"] = fmt::format("{}", o_.check_runs);
    rp.options["check_executor"] = o_.check_executor;
    rp.options["input_shapes"] = fmt::format("{}", fmt::join(o_.input_shapes, ","));
    rp.options["dims"] = fmt::format("{}", fmt::join(o_.dims, ","));
    rp.options["opset"] = fmt::format("{}", o_.opset);
    ImportOptions io;
    io.input_shapes = parse_input_shapes(o_.input_shapes);
    io.dim_values = parse_dim_values(o_.dims);
    auto t = JobClock::now();
    m_ = bytes_ ? import_onnx_bytes(*bytes_, "", io, rep_) : import_onnx_file(o_.input, io, rep_);
    rp.seconds["import"] = seconds_since(t);
    opts_ = optimizer_options(o_.search);
    opts_.tolerance = tolerance_for(m_.info->stored_precision(), opts_.tolerance);
    opts_.canonical_views = o_.ort_contrib_ops;
    rp.options["rtol"] = fmt::format("{}", opts_.tolerance.rtol);
    rp.options["atol"] = fmt::format("{}", opts_.tolerance.atol);
    rp.opset = m_.info->opset();
    rp.onnx_ops_before = m_.summary.onnx_op_counts;
    rp.opaque = m_.summary.opaque;
    rp.removed = m_.summary.removed;
    rp.no_ops = m_.summary.no_ops;
    rp.import_notes = m_.summary.notes;
    observer_.imported(m_);
  }

  // The runtime the model is optimized for: ONNX Runtime by default, priced by its own
  // kernel times; graphsub's oneDNN executor when asked, or when ONNX Runtime is missing.
  void open_target() {
    target_ = ort::open_target(o_.search.target, worker_options());
    report().options["target"] = target_.name;
    report().options["ort_contrib_ops"] = o_.ort_contrib_ops ? "true" : "false";
    if (o_.ort_contrib_ops && !target_.worker)
      throw Error(fmt::format("--ort-contrib-ops: {}", target_.fallback));
    if (!target_.fallback.empty()) {
      report().import_notes.push_back(target_.fallback);
      rep_.warn(target_.fallback);
    }
    guarded_ = target_.worker && o_.guard_runs != 0;
    if (target_.worker) {
      report().options["cost"] = "ort";
      cost_ = std::make_unique<ort::OrtCostModel>(
          *target_.worker, opts_.cache_dir.empty() ? opt::default_cache_dir() : opts_.cache_dir, 1,
          rep_);
    } else {
      cost_ = opt::make_cost_model(opts_, rep_);
    }
    // The file holds only operators of its opset (the input's unless --opset says).
    cost_->set_written_opset(written_onnx_opset(o_.opset, m_.info.get()));
  }

  // The search, and the optimizer's check of its choice at the import's shapes (on the
  // job's input sets and executor; a mismatch is reported, not thrown).
  void search() {
    opts_.check = checking() && !guarded_;
    opts_.check_runs = o_.check_runs;
    opts_.check_executor =
        o_.check_executor == "reference" ? CheckExecutor::Reference : CheckExecutor::Onednn;
    opts_.mismatch_is_error = false;
    // The guard times the few best distinct graphs: the search keeps them.
    if (guarded_)
      opts_.search.finalists = static_cast<size_t>(o_.guard_candidates < 0 ? kDefaultGuardCandidates
                                                                           : o_.guard_candidates);
    report().result = opt::optimize_graph(m_.graph, opts_, lib_, *cost_, rep_);
    if (opts_.canonical_views && result().views_canonicalized > 0 && !views_hold()) {
      opts_.canonical_views = false;
      report().result = opt::optimize_graph(m_.graph, opts_, lib_, *cost_, rep_);
    }
    report().ops_before = opt::op_counts(m_.graph);
    report().ops_after = opt::op_counts(result().optimized);
    written_ = &result().optimized;
    observer_.optimized(m_.graph, result());
    note_held_back_by_opset();
  }

  // Where a rule would have introduced an operator the written file's opset lacks (ONNX's
  // Attention over grouped key/value heads in an opset-17 export), said, with the --opset
  // that holds it.
  void note_held_back_by_opset() {
    const Graph& searched = result().searched_from ? *result().searched_from : m_.graph;
    std::string line = describe_held_back(
        held_back_by_opset(searched, lib_, cost_->written_opset()), cost_->written_opset());
    if (line.empty()) return;
    report().import_notes.push_back(line);
    rep_.info(fmt::format("note: {}", line));
  }

  // The chains of reshapes and transposes written in the rule language before the search
  // (opt/transforms/canonical_views.h) are reshapes the import at the other value of a
  // symbolic dimension did not record; where the search's choice then cannot be instantiated
  // there (a split of a batch of windows, as in Swin), the search runs again without them
  // rather than write the input as given.
  bool views_hold() {
    for (size_t p = 0; p < m_.info->symbolic.size(); ++p) {
      const SymbolicDim& d = m_.info->symbolic[p];
      try {
        instantiate_symbolic(result().optimized, *m_.info, p);
      } catch (const Error& e) {
        std::string why = fmt::format(
            "reshape and transpose chains written in the rule language do not hold at {}={} "
            "({}); searched again without them",
            d.name, d.alt, e.what());
        rep_.progress("search", 0, 0, why);
        report().import_notes.push_back(why);
        return false;
      }
    }
    return true;
  }

  bool checked_at_import_shapes() {
    if (!checking()) {
      observer_.check_skipped("");
      return true;
    }
    const opt::OptimizeResult& r = result();
    report().check = r.check;
    report().seconds["check"] = r.check_seconds;
    observer_.checked(r.check, m_.graph, r.check_seconds, "");
    if (!r.check.ok) out_.failure = mismatch_message(r, opts_.tolerance);
    return r.check.ok;
  }

  // Whether the search's choice can be instantiated at the other value of each symbolic
  // dimension. A rewrite that baked the imported value into a weight's shape (SigLIP's GELU:
  // a constant [2,196,3072] at batch 2) is valid at that value only; then the input, which
  // is valid at every value, is written as given (input_only_).
  std::optional<Graph> instantiated_at(size_t p) {
    const SymbolicDim& d = m_.info->symbolic[p];
    try {
      return instantiate_symbolic(result().optimized, *m_.info, p);
    } catch (const Error& e) {
      std::string why = fmt::format(
          "the optimized graph does not hold at {}={} ({}); the input is written "
          "as given",
          d.name, d.alt, e.what());
      rep_.warn(why);
      report().import_notes.push_back(why);
      input_only_ = true;
      return std::nullopt;
    }
  }

  void holds_at_other_values() {
    if (!checking()) return;
    for (size_t p = 0; p < m_.info->symbolic.size() && !input_only_; ++p) instantiated_at(p);
  }

  // The written model keeps the symbolic dimensions: the check runs again at the other value
  // of each (the model imported there against the optimized graph instantiated there); a
  // graph that fixed a dimension's value fails here rather than when run.
  bool checked_at_other_values() {
    if (!checking()) return true;
    for (size_t p = 0; p < m_.info->symbolic.size(); ++p) {
      const SymbolicDim& d = m_.info->symbolic[p];
      std::string at = fmt::format("{}={}", d.name, d.alt);
      auto t = JobClock::now();
      std::optional<Graph> instantiated = instantiated_at(p);
      if (!instantiated) return true;  // choose_by_latency writes the input
      // One random input set: the values were checked at the import's shapes; here what can
      // differ is a rewrite that holds at those shapes only, which one set shows as surely as
      // three (Whisper's encoder at batch 5: 14.8 s for three sets).
      CheckOptions once = check_options();
      once.runs = std::min(once.runs, 1);
      ResultCheck alt = check_equivalent(m_.alt_graphs[p], *instantiated, once, rep_);
      report().seconds["check " + at] = seconds_since(t);
      observer_.checked(alt, m_.alt_graphs[p], report().seconds["check " + at], at);
      bool ok = alt.ok;
      report().symbolic_checks.emplace_back(at, std::move(alt));
      if (!ok) {
        out_.failure = fmt::format(
            "at {} the optimized model does NOT compute what the original computes; optimize "
            "at that value with --dim or --input-shape. Nothing was written.",
            at);
        return false;
      }
    }
    return true;
  }

  // After the guard: the search's choice, where it is to be written, checked as the search's
  // check would have (at the import's shapes, with the bisection on a mismatch, and at the
  // other values); the input or the original as imported needs no check, and says so.
  bool checked_as_written() {
    if (!checking()) {
      observer_.check_skipped("");
      return true;
    }
    if (written_ != &result().optimized) {
      if (written_ == &m_.graph) {
        report().check_not_needed =
            input_bytes_ ? "the input is written as given" : "the original as imported is written";
        observer_.check_skipped(report().check_not_needed);
      }
      return true;  // a runner-up was checked when the guard chose it
    }
    opt::check_result(m_.graph, lib_, opts_, report().result, rep_);
    return checked_at_import_shapes() && checked_at_other_values();
  }

  // Whether `g` computes what the imported model computes, at the import's shapes and at the
  // second value of each symbolic dimension, as the search's choice was checked.
  bool passes_checks(const Graph& g) {
    auto run = [&](const Graph& original, const Graph& candidate, const std::string& at) {
      auto t = JobClock::now();
      ResultCheck c = check_equivalent(original, candidate, check_options(), rep_);
      double seconds = seconds_since(t);
      report().seconds[at.empty() ? "check" : "check " + at] = seconds;
      observer_.checked(c, original, seconds, at);
      bool ok = c.ok;
      if (at.empty())
        report().check = std::move(c);
      else
        report().symbolic_checks.emplace_back(at, std::move(c));
      return ok;
    };
    bool ok = run(m_.graph, g, "");
    for (size_t p = 0; ok && p < m_.info->symbolic.size(); ++p) {
      const SymbolicDim& d = m_.info->symbolic[p];
      ok = run(m_.alt_graphs[p], instantiate_symbolic(g, *m_.info, p),
               fmt::format("{}={}", d.name, d.alt));
    }
    if (!ok) {  // what is written instead is checked on its own
      report().check.reset();
      report().symbolic_checks.clear();
    }
    return ok;
  }

  ExportOptions export_options() const {
    ExportOptions eo;
    eo.external_data = o_.external_data;
    eo.opset = o_.opset;
    // ONNX Runtime fuses Add + LayerNormalization by itself, even where that is slower.
    if (skip_norms_) eo.adds_as_sum = [l = skip_norms_](const Graph& g) { return l->adds(g); };
    return eo;
  }

  void dump_candidates() {
    if (o_.dump_candidates.empty()) return;
    size_t n = driver::dump_candidates(o_.dump_candidates, m_, result(), lib_, *cost_,
                                       kDumpedRandomSamples, opts_.seed, export_options());
    rep_.progress("dump", 0, 0, fmt::format("{} candidate graphs in {}", n, o_.dump_candidates));
  }

  // The ort target: the original and the search's few best graphs timed end to end; the one
  // written is the fastest beyond the noise band, the original when none is.
  void choose_by_latency() {
    if (input_only_) {
      written_ = &m_.graph;
      keep_input();
      return;
    }
    if (!guarded_) return;
    const opt::OptimizeResult& r = result();
    auto t = JobClock::now();
    std::vector<GuardCandidate> cands = {{&r.optimized, r.final_cost / 1e3}};
    for (const opt::RunnerUp& u : r.runners_up) cands.push_back({&u.graph, u.cost / 1e3});
    plan_layout();
    if (padded_) {
      cands.front().predicted_ms = report().layout->search_ms;
      cands.insert(cands.begin(), {&*padded_, report().layout->padded_ms});
    }
    price_skip_norms(cands);
    GuardStep g = run_latency_guard(
        *target_.worker, m_, cands, r.initial_cost / 1e3, o_.input, bytes_, export_options(),
        o_.guard_runs,
        guard_dims(*m_.info, parse_dim_values(o_.dims), parse_input_shapes(o_.input_shapes)), rep_);
    report().seconds["guard"] = seconds_since(t);
    if (!g.note.empty()) report().import_notes.push_back(g.note);
    report().guard = g.result;
    written_ = g.write_original ? &m_.graph : cands[static_cast<size_t>(g.chosen)].graph;
    if (g.write_input) keep_input();
    // A runner-up (or the padded graph) is written only after it passes the same checks as
    // the search's choice (checked here, not before timing: most runs write the search's
    // choice, and checking every runner-up doubled the guard's time); one that fails is not
    // written, and said.
    if (!g.write_original && written_ != &r.optimized && checking()) {
      t = JobClock::now();
      if (!passes_checks(*written_)) {
        // Then the search's choice where it timed faster than the input beyond noise, else
        // the input as given (the burden of proof is on the rewrite).
        ort::GuardResult& gr = *report().guard;
        int search = padded_ ? 1 : 0;
        bool first_wins = search < static_cast<int>(gr.candidates.size()) &&
                          gr.original_ms > gr.candidates[static_cast<size_t>(search)].median_ms *
                                               (1 + gr.noise) &&
                          not_slower_in_openvino(gr, search);
        std::string why = fmt::format(
            "the {} the latency guard timed fastest does not compute what the original "
            "computes; {} is written instead",
            written_ == padded_ptr() ? "channel-padded graph" : "runner-up",
            first_wins ? "the search's choice" : "the input");
        rep_.warn(why);
        report().import_notes.push_back(why);
        gr.chosen = first_wins ? search : -1;
        gr.write_input = !first_wins;
        gr.verdict += "; " + why;
        written_ = first_wins ? &r.optimized : &m_.graph;
        if (!first_wins) keep_input();
      }
      report().seconds["guard check"] = seconds_since(t);
    }
    if (report().guard) observer_.guarded(*report().guard);
    report().ops_after = opt::op_counts(*written_);
    if (!input_bytes_) note_skip_norm_lowering();
    if (auto& l = report().layout) {
      l->written = ort::predict_nchwc(*written_, l->block);
      l->written_padded = written_ == padded_ptr();
      observer_.layout(*l);
    }
  }

  // The skip normalizations ONNX Runtime would fuse, priced before the guard times the
  // candidates (export_options() writes the slower ones' Adds as Sum).
  void price_skip_norms(const std::vector<GuardCandidate>& cands) {
    auto* ort_cost = dynamic_cast<ort::OrtCostModel*>(cost_.get());
    if (!ort_cost) return;
    skip_norms_ = std::make_shared<ort::SkipNormLowering>();
    skip_norms_->price(*ort_cost, m_.graph);
    for (const GuardCandidate& c : cands) skip_norms_->price(*ort_cost, *c.graph);
  }

  // What the export's skip-normalization lowering writes as Sum, said.
  void note_skip_norm_lowering() {
    if (!skip_norms_) return;
    std::string line = skip_norms_->describe(*written_);
    if (line.empty()) return;
    report().import_notes.push_back(line);
    observer_.lowered(line);
  }

  const Graph* padded_ptr() const { return padded_ ? &*padded_ : nullptr; }

  // Whether candidate `i` may stand in for one that failed its check as far as OpenVINO is
  // concerned: no OpenVINO timing ran, or it timed `i` not slower than the original beyond
  // its band (medians).
  static bool not_slower_in_openvino(const ort::GuardResult& gr, int i) {
    if (!gr.second) return true;
    const ort::SecondRuntimeCheck& o = *gr.second;
    for (size_t k = 0; k < o.index.size(); ++k)
      if (o.index[k] == i) return o.candidates[k].median_ms <= o.original_ms * (1 + o.noise);
    return false;  // not timed there (OpenVINO could not load it)
  }

  // ONNX Runtime's blocked layout for the guard: predicted for the original and the search's
  // choice, and the search's choice with channels padded to the block, timed first where
  // predicted cheaper with its reorders (driver/nchwc_layout_step.h).
  void plan_layout() {
    auto* ort_cost = dynamic_cast<ort::OrtCostModel*>(cost_.get());
    if (!ort_cost) return;
    auto t = JobClock::now();
    report().layout = run_layout_step(m_.graph, result(), *ort_cost, *m_.info, padded_);
    report().seconds["layout"] = seconds_since(t);
  }

  // The guard timed nothing faster than the input beyond the band: the input is written as
  // given, where it can be (one self-contained file; no other opset asked for).
  void keep_input() {
    std::string why;
    if (m_.info->source_files.size() > 1)
      why = "its weights are in external data files";
    else if (o_.opset != 0 && o_.opset != m_.info->opset())
      why = fmt::format("--opset {} asks for another opset", o_.opset);
    if (why.empty() && !bytes_) {
      std::ifstream in(o_.input, std::ios::binary);
      std::ostringstream all;
      all << in.rdbuf();
      if (!in) why = fmt::format("'{}' could not be read again", o_.input);
      input_bytes_ = all.str();
    } else if (why.empty()) {
      input_bytes_ = *bytes_;
    }
    if (why.empty()) return;
    input_bytes_.reset();
    std::string note =
        fmt::format("the input cannot be written as given ({}): the original as imported is", why);
    rep_.warn(note);
    report().import_notes.push_back(note);
  }

  // The written file against the input in ONNX Runtime: what differs ("" where nothing does)
  // and, where that is why, what kept the input from running. Symbolic dimensions at 1 and at
  // the first one's other value; a model that does not run with all of them at one value
  // (dimensions tied to each other: a cache's length, the new tokens' and the mask's) is
  // compared at the values it was imported and optimized at instead.
  std::pair<std::string, std::string> compared_in_runtime(const std::string& original,
                                                          const std::string& candidate) {
    const ort::CompareOptions base{
        .sets = 1, .seed = opts_.seed, .rtol = opts_.tolerance.rtol, .atol = opts_.tolerance.atol};
    std::vector<ort::CompareOptions> uniform(1, base);
    if (!m_.info->symbolic.empty()) {
      uniform.push_back(base);
      uniform.back().dim = m_.info->symbolic[0].alt;
    }
    ort::CompareOptions imported = base;
    imported.dims = imported_dims(*m_.info);
    std::string failure, cannot_run;
    // One comparison; false where the input itself does not run there.
    auto compare = [&](const ort::CompareOptions& at) {
      ort::RuntimeComparison c = ort::compare_in_runtime(*target_.worker, original, candidate, at);
      report().runtime_checks.push_back(c);
      if (!c.reference_error.empty()) {
        cannot_run = c.reference_error;
        return false;
      }
      for (const auto& o : c.outputs)
        if (!o.match && failure.empty())
          failure = fmt::format(
              "output '{}' at symbolic dimensions {}: {}", o.name,
              c.dims.empty() ? fmt::format("{}", c.dim) : fmt::format("{}", c.dims),
              o.note.empty() ? fmt::format("max abs diff {:.3g}", o.max_abs_diff) : o.note);
      return true;
    };
    try {
      bool ran_everywhere = true;
      for (const auto& at : uniform)
        if (failure.empty()) ran_everywhere = compare(at) && ran_everywhere;
      if (failure.empty() && !ran_everywhere && (m_.info->symbolic.empty() || !compare(imported)))
        failure = cannot_run;
      else
        cannot_run.clear();
    } catch (const Error& e) {
      failure = e.what();
      cannot_run.clear();
    }
    return {failure, cannot_run};
  }

  // A file that holds ONNX Runtime's own operators is run there against the input before it
  // is written: graphsub's check ran its reference kernels of those operators, this runs ONNX
  // Runtime's (one random input set; see compared_in_runtime for the dimensions). One that
  // differs, or that ONNX Runtime cannot run, is not written: the input is.
  void checked_in_runtime() {
    if (!target_.worker || !checking() || written_ == &m_.graph) return;
    bool runtime_ops = false;
    for (NodeId id = 0; id < written_->num_slots(); ++id)
      runtime_ops = runtime_ops || (written_->alive(id) && !written_->node(id).op->runtime.empty());
    if (!runtime_ops) return;
    auto t = JobClock::now();
    ScratchDir dir("graphsub-runtime-check");
    ExportOptions eo = export_options();
    eo.external_data = false;
    std::string original = bytes_ ? dir.write("input.onnx", *bytes_) : o_.input, candidate;
    std::string bytes;
    try {
      bytes = export_onnx_bytes(*written_, m_.info.get(), eo);
      candidate = dir.write("written.onnx", bytes);
    } catch (const Error& e) {  // over protobuf's 2 GiB in one message
      report().import_notes.push_back(fmt::format(
          "not checked in ONNX Runtime (the file cannot be held as one message: {})", e.what()));
      return;
    }
    auto [failure, cannot_run] = compared_in_runtime(original, candidate);
    report().seconds["check in onnxruntime"] = seconds_since(t);
    if (failure.empty()) {
      to_write_ = std::move(bytes);  // what was checked is what write() writes, exported once
      return;
    }
    std::string why =
        cannot_run.empty()
            ? fmt::format(
                  "the file with ONNX Runtime's own operators does NOT compute what the input "
                  "computes in ONNX Runtime ({}); the input is written instead",
                  failure)
            : fmt::format(
                  "the file with ONNX Runtime's own operators could not be checked in ONNX "
                  "Runtime, which cannot run the input at the imported values of its symbolic "
                  "dimensions ({}); give values it runs at with --dim NAME=VALUE. The input is "
                  "written instead",
                  cannot_run);
    rep_.warn(why);
    report().import_notes.push_back(why);
    written_ = &m_.graph;
    keep_input();
  }

  // The chosen model, to the output file or as bytes; its nodes counted as written.
  void write() {
    auto t = JobClock::now();
    ExportOptions eo = export_options();
    if (!to_write_ && input_bytes_) to_write_ = std::move(input_bytes_);
    if (o_.output.empty()) {
      out_.model_bytes =
          to_write_ ? std::move(*to_write_) : export_onnx_bytes(*written_, m_.info.get(), eo);
      report().onnx_ops_after = onnx_node_counts(out_.model_bytes);
    } else {
      report().onnx_ops_after = to_write_
                                    ? write_onnx_bytes(*to_write_, m_.info.get(), o_.output, eo)
                                    : export_onnx_file(*written_, m_.info.get(), o_.output, eo);
    }
    report().seconds["export"] = seconds_since(t);
  }

  const OnnxJobOptions& o_;
  const std::string* bytes_;
  const opt::RuleLibrary& lib_;
  Reporter& rep_;
  OnnxJobObserver& observer_;

  OnnxJobResult out_;
  ImportedModel m_;
  opt::OptimizeOptions opts_;
  ort::Target target_;
  bool guarded_ = false;
  std::unique_ptr<opt::CostModel> cost_;
  std::shared_ptr<ort::SkipNormLowering> skip_norms_;  // the ort target's, priced before the guard
  // The search's result holds at the imported value of a symbolic dimension only: the input.
  bool input_only_ = false;
  const Graph* written_ = nullptr;  // the graph to write: the search's, a runner-up's, or m_'s
  std::optional<Graph> padded_;     // the search's choice with channels padded, when timed
  // The model to write as serialized bytes, when not *written_ itself: the file checked in ONNX
  // Runtime (checked_in_runtime), or the input as given (input_bytes_, moved here on writing).
  std::optional<std::string> to_write_;
  std::optional<std::string> input_bytes_;
};

}  // namespace

OnnxJobResult run_onnx_job(const OnnxJobOptions& o, const std::string* model_bytes,
                           const opt::RuleLibrary& lib, Reporter& rep, OnnxJobObserver& observer) {
  validate(o);
  return OnnxJob(o, model_bytes, lib, rep, observer).run();
}

}  // namespace graphsub::driver
