#include "driver/rule_jobs.h"

#include <fmt/format.h>

#include <algorithm>

#include "driver/data_paths.h"
#include "driver/optimize_options.h"
#include "gen/space/pool.h"
#include "opt/transforms/rule_transform.h"
#include "rules/orientations.h"
#include "rules/rule_parser.h"
#include "rules/rule_printer.h"

namespace graphsub::driver {

void check_threads(const char* flag, int threads) {
  if (threads < 0 || threads > max_threads())
    throw OptionError(
        fmt::format("{} {}: expected 0 (all cores) to {} (4 x the hardware threads, "
                    "never above 1024)",
                    flag, threads, max_threads()));
}

size_t VerifyJobResult::proved() const {
  return static_cast<size_t>(
      std::count_if(verdicts.begin(), verdicts.end(), [](const auto& v) { return v.proved(); }));
}

VerifyJobResult run_verify_job(const VerifyJobOptions& o, Reporter& rep) {
  check_threads("--threads", o.threads);
  std::string ax = o.axioms.empty() ? shipped_axioms() : o.axioms;
  rules::RuleSet axioms = rules::load_rules(ax);
  rules::RuleSet set = o.text.empty() ? rules::load_rules(o.file, &axioms)
                                      : rules::parse_rules(o.text, o.file, &axioms);
  verify::VerifyOptions opts;
  opts.timeout_ms = o.timeout_ms;
  opts.rlimit = o.rlimit;
  opts.threads = o.threads;
  opts.numeric_test = o.numeric;
  opts.reuse_context = o.reuse_context;
  opts.count_resources = o.count_resources;
  // Rules that type-check only at larger shapes than the axioms' space (images of 5x5 for
  // 3-wide valid pooling after a stride-2 conv) are tested at the generator's pool shapes,
  // where every rule of the shipped library type-checks.
  opts.fallback_types = gen::pool_types(gen::default_pool());
  verify::Verifier verifier(std::move(axioms), opts);
  // An equality is one statement: proved once, in a direction that can drive a rewrite, under
  // its own name.
  std::vector<rules::Rule> statements;
  for (const auto& r : set.rules) statements.push_back(rules::statement(r));
  return {o.file, verifier.verify_all(statements, rep)};
}

size_t AxiomCheckJobResult::false_count() const {
  return static_cast<size_t>(std::count_if(report.axioms.begin(), report.axioms.end(),
                                           [](const auto& a) { return !a.holds; }));
}

AxiomCheckJobResult run_check_axioms_job(const AxiomCheckJobOptions& o, Reporter& rep) {
  check_threads("--threads", o.threads);
  AxiomCheckJobResult out;
  out.file = o.axioms.empty() ? shipped_axioms() : o.axioms;
  rules::RuleSet set = rules::load_rules(out.file);
  if (!o.only.empty()) {
    std::vector<rules::Rule> keep;
    for (const auto& name : o.only) {
      auto it = std::find_if(set.axioms.begin(), set.axioms.end(),
                             [&](const rules::Rule& r) { return r.name == name; });
      if (it == set.axioms.end())
        throw Error(fmt::format("{}: no axiom named '{}'", out.file, name));
      keep.push_back(*it);
    }
    set.axioms = std::move(keep);
  }
  rules::ShapeSpace space = set.shapes.value_or(rules::ShapeSpace{});
  rules::AxiomCheckOptions opts;
  opts.threads = o.threads;
  opts.bounded.seed = o.seed;
  out.report = rules::check_axioms(set, space, opts, rep);
  return out;
}

std::vector<RuleListing> list_rules(const opt::RuleLibrary& lib) {
  std::vector<RuleListing> out;
  for (const opt::Transform* t : lib.transforms()) {
    const auto* rt = dynamic_cast<const opt::RuleTransform*>(t);
    out.push_back({t->name(), t->origin(), rt ? rules::rule_str(rt->rule()) : std::string()});
  }
  return out;
}

}  // namespace graphsub::driver
