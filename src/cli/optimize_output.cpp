#include "cli/optimize_output.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

namespace graphsub {

namespace {

std::string pct(double before, double after) {
  if (before == 0) return "-";
  return fmt::format("{:+.1f}%", 100.0 * (after - before) / before);
}

// One row per operator and a total; with `mark_changes` a "*" on the rows that changed.
void print_op_table(const std::map<std::string, size_t>& a, const std::map<std::string, size_t>& b,
                    bool mark_changes) {
  std::set<std::string> ops;
  for (const auto& [op, n] : a) ops.insert(op);
  for (const auto& [op, n] : b) ops.insert(op);
  fmt::print("{:<16} {:>8} {:>8}\n", "operator", "before", "after");
  size_t ta = 0, tb = 0;
  for (const auto& op : ops) {
    size_t x = a.count(op) ? a.at(op) : 0, y = b.count(op) ? b.at(op) : 0;
    ta += x;
    tb += y;
    fmt::print("{:<16} {:>8} {:>8}{}\n", op, x, y, mark_changes && x != y ? "  *" : "");
  }
  fmt::print("{:<16} {:>8} {:>8}\n", "total", ta, tb);
}

}  // namespace

void OnnxJobPrinter::imported(const ImportedModel& m) {
  if (quiet_) return;
  const auto& s = m.summary;
  int64_t nodes = 0;
  for (const auto& [op, n] : s.onnx_op_counts) nodes += n;
  fmt::print("imported {}: opset {}, {} ONNX nodes -> {} graphsub operators", input_,
             m.info->opset(), nodes, m.graph.num_ops());
  if (!m.info->producer_name.empty())
    fmt::print(" (from {}{})", m.info->producer_name,
               m.info->producer_version.empty() ? "" : " " + m.info->producer_version);
  fmt::print("\n");
  if (s.removed)
    fmt::print("  removed {} Identity/Dropout node{}\n", s.removed, s.removed == 1 ? "" : "s");
  if (s.no_ops)
    fmt::print(
        "  removed {} no-op node{} (x + 0, x * 1 with constants, pads by 0, casts to their own "
        "type, slices of a whole tensor)\n",
        s.no_ops, s.no_ops == 1 ? "" : "s");
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

void OnnxJobPrinter::optimized(const Graph& before, const opt::OptimizeResult& r) {
  if (quiet_) return;
  print_op_table(opt::op_counts(before), opt::op_counts(r.optimized), true);
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
  if (r.views_canonicalized || r.reshapes_joined)
    fmt::print(
        "reshape and transpose chains: {} written in the rule language before the search, {} "
        "reshapes joined after it\n",
        r.views_canonicalized, r.reshapes_joined);
}

// Outputs one line each; cuts at opaque nodes grouped by op type (mismatches also alone).
void OnnxJobPrinter::checked(const ResultCheck& rc, const Graph& original, double secs,
                             const std::string& at) {
  if (quiet_ && rc.ok) return;
  if (!at.empty()) fmt::print("at {}: ", at);
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
    // An output that is 0 whatever the input (zero-initialized weights, as torchvision's
    // ViT head) passes against any rewrite that also gives 0: say that the check saw nothing.
    else if (!t.boundary && t.max_ref == 0)
      fmt::print(
          "    warning: the original's '{}' is 0 on every input set, so this comparison cannot "
          "tell a wrong rewrite from a right one (zero weights?)\n",
          t.name);
  }
}

void OnnxJobPrinter::check_skipped(const std::string& why) {
  if (quiet_) return;
  if (why.empty())
    fmt::print(
        "check: skipped (--check 0); the optimized model was not compared with the original\n");
  else
    fmt::print("check: not needed ({}): no rewrite is written\n", why);
}

void OnnxJobPrinter::guarded(const ort::GuardResult& g) {
  // Quiet means quiet: the input written in place of the search's result is the usual
  // outcome, not a warning, and --report-json keeps the verdict.
  if (quiet_) return;
  fmt::print("latency guard: {}\n", g.verdict);
  if (g.candidates.size() < 2) return;
  fmt::print("  original     predicted {:9.3f} ms, measured {:9.3f} ms\n", g.original.predicted_ms,
             g.original_ms);
  for (size_t i = 0; i < g.candidates.size(); ++i)
    fmt::print("  candidate {}  predicted {:9.3f} ms, measured {:9.3f} ms{}\n", i + 1,
               g.candidates[i].predicted_ms, g.candidates[i].median_ms,
               static_cast<int>(i) == g.chosen ? "  <- written" : "");
  if (const auto& o = g.second) {
    fmt::print("  in {}: original {:.3f} ms (A/A {:.3f})\n", o->runtime, o->original.median_ms,
               o->original.median_ms > 0 ? o->control.median_ms / o->original.median_ms : 1.0);
    for (size_t k = 0; k < o->candidates.size(); ++k)
      fmt::print("  candidate {}  {:.3f} ms ({:.3f}x){}\n", o->index[k] + 1,
                 o->candidates[k].median_ms, o->original_ms / o->candidates[k].median_ms,
                 o->index[k] == o->kept ? "  <- kept" : "");
    for (const auto& why : o->refused) fmt::print("  {}\n", why);
    for (const auto& line : o->retimed) fmt::print("  {}\n", line);
  }
}

void OnnxJobPrinter::lowered(const std::string& line) {
  if (!quiet_) fmt::print("lowering: {}\n", line);
}

void OnnxJobPrinter::layout(const driver::LayoutStep& l) {
  // Said even when quiet when written: the file is then tuned for this CPU's block size.
  if (quiet_ && !l.written_padded) return;
  if (l.written_padded) {
    fmt::print(
        "layout: channels padded or groups merged for ONNX Runtime's block of {} on this CPU "
        "({}){}\n",
        l.block, fmt::join(l.regions, "; "),
        l.other_padded
            ? fmt::format("; at block {}, predicted: {}", l.other_block, l.other_padded->summary())
            : "");
    if (quiet_) return;
  }
  if (l.block <= 0) return fmt::print("layout: {}\n", l.verdict);
  fmt::print("layout (ONNX Runtime's NCHWc, predicted): original {}; search's choice {}\n",
             l.original.summary(), l.search.summary());
  if (l.padded)
    fmt::print("  channel padding ({}): {}\n", fmt::join(l.regions, "; "), l.padded->summary());
  if (l.other_padded) fmt::print("  at block {}: {}\n", l.other_block, l.other_padded->summary());
  for (const auto& r : l.left_out) fmt::print("  left as it is: {}\n", r);
  fmt::print("  {}\n", l.verdict);
  if (l.written) fmt::print("  written: {}\n", l.written->summary());
}

void print_written(const std::string& output, const driver::Report& r, bool quiet) {
  if (!quiet) {
    auto size = std::filesystem::file_size(output);
    std::string data = output + ".data";
    bool external = std::filesystem::exists(data);
    fmt::print("wrote {} ({:.1f} MB{}), onnx::checker ok\n", output,
               static_cast<double>(size) / 1e6,
               external ? fmt::format(", weights in {}", data) : "");
  }
  // Said even when quiet: the file graphsub wrote runs in ONNX Runtime only.
  std::vector<std::string> added;
  for (const auto& [op, n] : runtime_operators_added(r))
    added.push_back(fmt::format("{} x{}", op, n));
  if (!added.empty())
    fmt::print("{} holds ONNX Runtime's own operators ({}): it runs in ONNX Runtime only\n", output,
               fmt::join(added, ", "));
}

void print_model_report(const driver::Report& rep, const driver::ModelJobOptions& o) {
  const opt::OptimizeResult& r = rep.result;
  fmt::print("optimized model {}\n", o.model);
  fmt::print("cost model: {} ({})\n", r.cost_model, r.assumptions);
  fmt::print("rules: {} in use\n\n", r.rules_loaded);

  print_op_table(rep.ops_before, rep.ops_after, false);
  fmt::print("\n");

  fmt::print("{:<22} {:>12} {:>12} {:>10}\n", "", "before", "after", "change");
  fmt::print("{:<22} {:>12.1f} {:>12.1f} {:>10}\n", "cost (us, predicted)", r.initial_cost,
             r.final_cost, pct(r.initial_cost, r.final_cost));
  if (rep.measured) {
    const auto& t = *rep.measured;
    fmt::print(
        "{:<22} {:>12.3f} {:>12.3f} {:>10}   speedup {:.2f}x (fast executor, median of {} "
        "alternated runs, {} thread(s))\n",
        "run time (ms)", t.a.wall_ms, t.b.wall_ms, pct(t.a.wall_ms, t.b.wall_ms),
        t.a.wall_ms / t.b.wall_ms, rep.measured_runs, rep.measured_threads);
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
    for (const auto& [rule, n] : r.rules_applied) fmt::print("  {:<36} {:>4}\n", rule, n);
  }
  fmt::print("weights pre-computed: {} operators folded into weights\n", r.folded);
  if (r.checked)
    fmt::print(
        "check: outputs match on random inputs (rtol {:g}, atol {:g}; max abs diff {:.3g}, max "
        "rel diff {:.3g}; reference executor, {:.2f} s)\n",
        r.check.rtol, r.check.atol, r.check.max_abs(), r.check.max_rel(), r.check_seconds);
  else
    fmt::print("check: skipped (--no-check)\n");
  if (!o.dot_dir.empty())
    fmt::print("graphs written to {}/original.dot and {}/optimized.dot\n", o.dot_dir, o.dot_dir);
}

}  // namespace graphsub
