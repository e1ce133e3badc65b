#include "driver/optimize_job.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "driver/data_paths.h"
#include "driver/job_support.h"
#include "ir/print.h"
#include "models/models.h"
#include "opt/cost/machine_profile.h"
#include "opt/search/search.h"

namespace graphsub::driver {

namespace {

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

std::unique_ptr<opt::RuleLibrary> load_rule_library(const SearchJobOptions& s, Reporter& rep,
                                                    bool runtime_kernels) {
  opt::RuleLibraryOptions o = resolved(s.rules);
  if (runtime_kernels && s.rules.rule_files.empty()) {
    for (const std::string& f : shipped_ort_fused_rules()) o.rule_files.push_back(f);
  }
  return std::make_unique<opt::RuleLibrary>(o, rep);
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
