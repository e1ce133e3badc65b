// `graphsub check-axioms`: tests every operator property of specs/operators.axioms on every
// legal parameter value and every small shape that type-checks, with the reference kernels.
#include <fmt/format.h>

#include <algorithm>

#include "cli/commands.h"
#include "cli/terminal_reporter.h"
#include "ir/error.h"
#include "rules/bounded_check.h"
#include "rules/rule_parser.h"

namespace graphsub {

void add_check_axioms_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand(
      "check-axioms",
      "test every axiom on all legal parameters and small shapes with the reference kernels");
  static std::string path;
  static int threads = 0;
  static uint64_t seed = 1;
  static std::vector<std::string> only;
  cmd->add_option("--axioms", path, "axioms file (default: specs/operators.axioms)");
  cmd->add_option("--threads", threads, "worker threads (default: all cores)");
  cmd->add_option("--seed", seed, "seed of the random inputs");
  cmd->add_option("--axiom", only, "test only the named axiom(s)");
  cmd->callback([&flags] {
    std::string file = path.empty() ? rules::default_axioms_path() : path;
    rules::RuleSet set = rules::load_rules(file);
    if (!only.empty()) {
      std::vector<rules::Rule> keep;
      for (auto& name : only) {
        auto it = std::find_if(set.axioms.begin(), set.axioms.end(),
                               [&](const rules::Rule& r) { return r.name == name; });
        if (it == set.axioms.end())
          throw graphsub::Error(fmt::format("{}: no axiom named '{}'", file, name));
        keep.push_back(*it);
      }
      set.axioms = std::move(keep);
    }
    rules::ShapeSpace space = set.shapes.value_or(rules::ShapeSpace{});
    TerminalReporter rep(flags.quiet);
    rules::AxiomCheckOptions opts;
    opts.threads = threads;
    opts.bounded.seed = seed;
    auto report = rules::check_axioms(set, space, opts, rep);
    size_t width = 0;
    for (auto& a : report.axioms) width = std::max(width, a.name.size());
    size_t false_count = 0;
    for (auto& a : report.axioms) {
      if (a.holds) {
        fmt::print("ok     {:<{}}  {:>8} instances ({} exact uint32), {} parameter sets\n", a.name,
                   width, a.instances, a.exact, a.param_sets);
      } else {
        ++false_count;
        fmt::print("FALSE  {:<{}}  after {} instances, at {}\n", a.name, width, a.instances,
                   a.counterexample);
      }
    }
    fmt::print(
        "{} axioms from {}: {} hold, {} false; {} instances tested ({} also exact in uint32) in "
        "{:.1f} s\n",
        report.axioms.size(), file, report.axioms.size() - false_count, false_count,
        report.instances, report.exact, report.seconds);
    if (false_count) flags.exit_code = 1;
  });
}

}  // namespace graphsub
