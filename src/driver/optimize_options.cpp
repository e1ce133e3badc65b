#include "driver/optimize_options.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "ir/parallel.h"
#include "models/models.h"
#include "onnx/onnx_model.h"
#include "ort/target.h"

namespace graphsub::driver {

namespace fs = std::filesystem;

namespace {

void check_finite_at_least(const char* flag, double v, double lo, double hi = INFINITY) {
  // NaN fails every comparison, so it is rejected by asking for the range positively.
  if (!(v >= lo && v <= hi) || std::isinf(v))
    throw OptionError(std::isinf(hi)
                          ? fmt::format("{} {}: must be a finite number, at least {}", flag, v, lo)
                          : fmt::format("{} {}: must be a number from {} to {}", flag, v, lo, hi));
}

// Same file (what the file system says, not the spelling): both exist and are equivalent, or
// they resolve to the same absolute path.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  fs::path ca = fs::weakly_canonical(a, ec);
  if (ec) return false;
  fs::path cb = fs::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

void validate_search(const SearchJobOptions& s) {
  const auto& o = s.opt;
  check_finite_at_least("--alpha", o.search.alpha, 1.0, 10.0);
  check_finite_at_least("--time-limit", o.search.time_limit_s, 0.0);
  check_finite_at_least("--rtol", o.tolerance.rtol, 0.0);
  check_finite_at_least("--atol", o.tolerance.atol, 0.0);
  if (o.search.budget < 1) throw OptionError("--budget 0: the search must expand at least 1 graph");
  if (o.search.time_limit_s == 0 && o.search.budget > kMaxBudgetWithoutTimeLimit)
    throw OptionError(fmt::format(
        "--budget {}: without --time-limit the budget is at most {} (a larger search may not "
        "finish in days); give --time-limit SECONDS to run a larger budget for a bounded time",
        o.search.budget, kMaxBudgetWithoutTimeLimit));
  if (o.search.max_queue < 1) throw OptionError("--max-queue 0: the queue must hold a graph");
  const auto& targets = cost_targets();
  if (!s.target.empty() && std::find(targets.begin(), targets.end(), s.target) == targets.end())
    throw OptionError(fmt::format("--target {}: no such target (valid targets: {})", s.target,
                                  fmt::join(targets, ", ")));
  if (!s.cost.empty() && s.cost != "analytic" && s.cost != "measured")
    throw OptionError(fmt::format("--cost {}: expected analytic or measured", s.cost));
  if (s.target == "ort" && !s.cost.empty())
    throw OptionError(fmt::format(
        "--cost {}: applies to --target onednn; the ort target measures its costs in ONNX "
        "Runtime",
        s.cost));
  if (o.threads < 0 || o.threads > max_threads())
    throw OptionError(fmt::format(
        "--threads {}: at most {} (4 x the {} hardware threads, never above 1024; 0: all cores)",
        o.threads, max_threads(), hardware_threads()));
  for (const auto& f : s.rules.rule_files) check_readable_file("--rules", f);
}

}  // namespace

const std::vector<std::string>& cost_targets() {
  return ort::target_names();
}

int max_threads() {
  return std::min(1024, 4 * hardware_threads());
}

void check_readable_file(const std::string& flag, const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw OptionError(fmt::format("{} {}: cannot read it: it is a folder, not a file", flag, path));
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    throw OptionError(fmt::format("{} {}: cannot open it: {}", flag, path, std::strerror(errno)));
  std::fclose(f);
}

void check_writable_file(const std::string& flag, const std::string& path) {
  std::error_code ec;
  if (path.empty()) throw OptionError(fmt::format("{}: no file named", flag));
  if (fs::is_directory(path, ec))
    throw OptionError(fmt::format("cannot write to {} {}: it is a folder", flag, path));
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent, ec))
    throw OptionError(
        fmt::format("cannot write to {} {}: there is no folder {}", flag, path, parent.string()));
  const char* target = fs::exists(path, ec) ? path.c_str() : parent.c_str();
  if (::access(target, W_OK) != 0)
    throw OptionError(fmt::format("cannot write to {} {}: {}", flag, path, std::strerror(errno)));
}

std::pair<std::string, Shape> parse_input_shape(const std::string& spec) {
  auto eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw OptionError(
        fmt::format("--input-shape '{}': expected NAME=DxDx..., e.g. input=1x3x224x224", spec));
  Shape s;
  std::string dims = spec.substr(eq + 1);
  size_t k = 0;
  while (k <= dims.size()) {
    size_t x = dims.find('x', k);
    if (x == std::string::npos) x = dims.size();
    std::string d = dims.substr(k, x - k);
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos || d.size() > 12)
      throw OptionError(fmt::format("--input-shape '{}': '{}' is not a dimension", spec, d));
    s.push_back(std::stoll(d));
    k = x + 1;
  }
  return {spec.substr(0, eq), s};
}

std::map<std::string, Shape> parse_input_shapes(const std::vector<std::string>& specs) {
  std::map<std::string, Shape> out;
  for (const auto& spec : specs) {
    auto [name, shape] = parse_input_shape(spec);
    out[name] = shape;
  }
  return out;
}

std::map<std::string, int64_t> parse_dim_values(const std::vector<std::string>& specs) {
  std::map<std::string, int64_t> out;
  for (const auto& spec : specs) {
    auto eq = spec.rfind('=');
    std::string value = eq == std::string::npos ? "" : spec.substr(eq + 1);
    if (eq == std::string::npos || eq == 0 || value.empty() ||
        value.find_first_not_of("0123456789") != std::string::npos || value.size() > 12)
      throw OptionError(
          fmt::format("--dim '{}': expected NAME=VALUE, a symbolic dimension's name and a "
                      "value of 1 or more, e.g. seq=128",
                      spec));
    int64_t v = std::stoll(value);
    if (v < 1) throw OptionError(fmt::format("--dim '{}': the value must be 1 or more", spec));
    if (!out.emplace(spec.substr(0, eq), v).second)
      throw OptionError(
          fmt::format("--dim '{}': dimension '{}' is given twice", spec, spec.substr(0, eq)));
  }
  return out;
}

opt::OptimizeOptions optimizer_options(const SearchJobOptions& s) {
  opt::OptimizeOptions o = s.opt;
  o.cost = s.cost == "measured" ? opt::CostKind::Measured : opt::CostKind::Analytic;
  return o;
}

void validate(const OnnxJobOptions& o) {
  validate_search(o.search);
  if (o.check_runs < 0 || o.check_runs > 1000)
    throw OptionError(
        fmt::format("--check {}: expected 0 to 1000 random input sets", o.check_runs));
  if (o.check_executor != "onednn" && o.check_executor != "reference")
    throw OptionError(
        fmt::format("--check-executor {}: expected onednn or reference", o.check_executor));
  if (o.opset != 0 && (o.opset < kMinConvertedOpset || o.opset > newest_onnx_opset()))
    throw OptionError(fmt::format("--opset {}: expected {} to {}", o.opset, kMinConvertedOpset,
                                  newest_onnx_opset()));
  if (o.guard_runs != -1 && o.guard_runs != 0 && (o.guard_runs < 3 || o.guard_runs > 1000))
    throw OptionError(fmt::format(
        "--guard-runs {}: expected 0 (no guard) or 3 to 1000 timed runs (a median needs 3)",
        o.guard_runs));
  if (o.guard_runs != -1 && o.search.target == "onednn")
    throw OptionError(fmt::format(
        "--guard-runs {}: the latency guard times models in ONNX Runtime (--target ort)",
        o.guard_runs));
  if (o.guard_candidates != -1 &&
      (o.guard_candidates < 1 || o.guard_candidates > kMaxGuardCandidates))
    throw OptionError(fmt::format("--guard-candidates {}: expected 1 to {} graphs",
                                  o.guard_candidates, kMaxGuardCandidates));
  if (o.guard_candidates != -1 && o.search.target == "onednn")
    throw OptionError(fmt::format(
        "--guard-candidates {}: the latency guard times models in ONNX Runtime (--target ort)",
        o.guard_candidates));
  if (o.ort_contrib_ops && o.search.target == "onednn")
    throw OptionError(
        "--ort-contrib-ops: ONNX Runtime's own operators are written for --target ort only");
  if (!o.dump_candidates.empty()) {
    std::error_code ec;
    if (fs::exists(o.dump_candidates, ec) && !fs::is_directory(o.dump_candidates, ec))
      throw OptionError(
          fmt::format("--dump-candidates {}: is a file, not a folder", o.dump_candidates));
  }
  parse_input_shapes(o.input_shapes);
  parse_dim_values(o.dims);
  if (!o.input.empty()) check_readable_file("input", o.input);
  if (!o.output.empty()) {
    check_writable_file("-o", o.output);
    if (!o.input.empty() && same_file(o.input, o.output))
      throw OptionError(
          fmt::format("optimize: the output file must differ from the input file ({} is {})",
                      o.output, o.input));
  }
  if (!o.report_json.empty()) {
    check_writable_file("--report-json", o.report_json);
    for (const auto& other : {o.input, o.output})
      if (!other.empty() && same_file(other, o.report_json))
        throw OptionError(
            fmt::format("--report-json {}: is the model file {}", o.report_json, other));
  }
}

void validate(const ModelJobOptions& o) {
  validate_search(o.search);
  if (o.search.target == "ort")
    throw OptionError(
        "--target ort: applies to ONNX models; built-in models are optimized for and timed on "
        "graphsub's oneDNN executor");
  auto names = model_names();
  if (std::find(names.begin(), names.end(), o.model) == names.end())
    throw OptionError(fmt::format("--model {}: no built-in model of that name (known: {})", o.model,
                                  fmt::join(names, ", ")));
  if (o.runs < 0) throw OptionError(fmt::format("--runs {}: must be 0 or more", o.runs));
  if (!o.dot_dir.empty()) {
    std::error_code ec;
    if (fs::exists(o.dot_dir, ec) && !fs::is_directory(o.dot_dir, ec))
      throw OptionError(fmt::format("--dot {}: is a file, not a folder", o.dot_dir));
  }
  if (!o.report_json.empty()) check_writable_file("--report-json", o.report_json);
}

}  // namespace graphsub::driver
