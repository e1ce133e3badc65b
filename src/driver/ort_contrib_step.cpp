#include "driver/ort_contrib_step.h"

#include <fmt/format.h>

#include "core/error.h"
#include "driver/latency_guard_step.h"
#include "driver/scratch_dir.h"
#include "ort/ort_attention_fusion.h"

namespace graphsub::driver {
namespace {

std::string worst_output(const ort::RuntimeComparison& c) {
  for (const auto& o : c.outputs)
    if (!o.match)
      return o.note.empty() ? fmt::format("output '{}': max abs diff {:.3g} at magnitude {:.3g}",
                                          o.name, o.max_abs_diff, o.max_abs_value)
                            : fmt::format("output '{}': {}", o.name, o.note);
  return "";
}

// The fused file against the unfused one, as the latency guard times the original against
// candidates (`runs` -1: the guard's default for a model of that run time).
ort::GuardResult time_against_unfused(ort::Worker& worker, const std::string& plain,
                                      const std::string& fused, int runs) {
  ort::GuardOptions g;
  if (runs > 0) {
    g.runs = runs;
  } else {
    worker.call({{"op", "load"}, {"id", "probe"}, {"path", plain}, {"threads", 1}});
    g.runs = default_guard_runs(time_probe(worker), 3);
  }
  return ort::guard_latency(worker, plain, {fused}, g);
}

}  // namespace

ContribStep run_ort_contrib_step(ort::Worker& worker, std::string& model_bytes,
                                 const ort::CompareOptions& check, const std::vector<int64_t>& dims,
                                 int guard_runs, Reporter& rep, const std::string& baseline) {
  ContribStep step;
  AttentionFusion fused = fuse_ort_attention(model_bytes, "the model to write");
  step.sites = fused.sites;
  if (fused.sites.empty()) {
    step.verdict =
        "--ort-contrib-ops: no multi-head attention of the form this step fuses (torch's "
        "sequence-first export, float weights) was found; no com.microsoft Attention is "
        "written (the search's fused operators, rules/ort_fused.rules and "
        "rules/ort_attention.rules, are as the guard chose)";
    return step;
  }
  std::string what =
      fmt::format("{} attention(s) fused into com.microsoft Attention", fused.sites.size());
  rep.progress("contrib", 0, 0, what + ": checking and timing them in ONNX Runtime");
  ScratchDir dir("graphsub-contrib");
  std::string plain = dir.write("unfused.onnx", model_bytes);
  std::string candidate = dir.write("fused.onnx", fused.model_bytes);
  for (int64_t dim : dims) {
    ort::CompareOptions at = check;
    at.dim = dim;
    try {
      step.checks.push_back(ort::compare_in_runtime(worker, plain, candidate, at));
    } catch (const Error& e) {
      step.verdict = fmt::format(
          "{}, but ONNX Runtime cannot run the result ({}); it is not written", what, e.what());
      rep.warn(step.verdict);
      return step;
    }
    if (!step.checks.back().match) {
      step.verdict = fmt::format(
          "{}, but the result does NOT compute what the unfused model computes in ONNX Runtime "
          "({}{}); it is not written",
          what, worst_output(step.checks.back()),
          dims.size() > 1 ? fmt::format(", symbolic dimensions at {}", dim) : "");
      rep.warn(step.verdict);
      return step;
    }
  }
  // As graphsub's own check says: an output that is 0 on every input (zero weights, as in an
  // untrained classifier head) cannot tell a wrong fusion from a right one.
  for (const auto& o : step.checks.front().outputs)
    if (o.max_abs_value == 0)
      rep.warn(fmt::format(
          "--ort-contrib-ops: the model's '{}' is 0 on every input set, so the check in ONNX "
          "Runtime cannot tell a wrong fusion from a right one (zero weights?)",
          o.name));
  if (guard_runs != 0) {
    try {
      step.timing =
          time_against_unfused(worker, baseline.empty() ? plain : baseline, candidate, guard_runs);
    } catch (const Error& e) {
      step.verdict = fmt::format(
          "{}, but ONNX Runtime failed timing the result ({}); it is not written", what, e.what());
      rep.warn(step.verdict);
      return step;
    }
    if (step.timing->chosen < 0) {
      step.verdict = fmt::format(
          "{}, but that is not faster in {} ({:.3f} ms against {:.3f} ms {}, noise band "
          "{:.1f}%): {} is written",
          what, step.timing->runtime, step.timing->candidates[0].median_ms,
          step.timing->original_ms, baseline.empty() ? "unfused" : "for the input",
          100 * step.timing->noise, baseline.empty() ? "the unfused model" : "the input");
      return step;
    }
  }
  step.written = true;
  model_bytes = std::move(fused.model_bytes);
  step.verdict =
      step.timing ? fmt::format(
                        "{}: {:.3f} ms -> {:.3f} ms in {} ({:.3f}x; noise band {:.1f}%); the file "
                        "now needs ONNX Runtime",
                        what, step.timing->original_ms, step.timing->candidates[0].median_ms,
                        step.timing->runtime, step.timing->speedup(), 100 * step.timing->noise)
                  : what + " (not timed: --guard-runs 0); the file now needs ONNX Runtime";
  return step;
}

}  // namespace graphsub::driver
