// `graphsub check-axioms`: tests every operator property of specs/operators.axioms on every
// legal parameter value and every small shape that type-checks, with the reference kernels.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "cli/commands.h"
#include "cli/terminal_reporter.h"
#include "driver/rule_jobs.h"

namespace graphsub {

void add_check_axioms_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand(
      "check-axioms",
      "test every axiom on all legal parameters and small shapes with the reference kernels");
  auto o = std::make_shared<driver::AxiomCheckJobOptions>();
  cmd->add_option("--axioms", o->axioms, "axioms file (default: specs/operators.axioms)");
  cmd->add_option("--threads", o->threads, "worker threads (default: all cores)");
  cmd->add_option("--seed", o->seed, "seed of the random inputs");
  cmd->add_option("--axiom", o->only, "test only the named axiom(s)");
  cmd->callback([o, &flags] {
    TerminalReporter rep(flags.quiet);
    driver::AxiomCheckJobResult res = driver::run_check_axioms_job(*o, rep);
    const auto& report = res.report;
    size_t width = 0;
    for (auto& a : report.axioms) width = std::max(width, a.name.size());
    for (auto& a : report.axioms) {
      if (a.holds) {
        fmt::print("ok     {:<{}}  {:>8} instances ({} exact uint32), {} parameter sets\n", a.name,
                   width, a.instances, a.exact, a.param_sets);
      } else {
        fmt::print("FALSE  {:<{}}  after {} instances, at {}\n", a.name, width, a.instances,
                   a.counterexample);
      }
    }
    size_t false_count = res.false_count();
    fmt::print(
        "{} axioms from {}: {} hold, {} false; {} instances tested ({} also exact in uint32) in "
        "{:.1f} s\n",
        report.axioms.size(), res.file, report.axioms.size() - false_count, false_count,
        report.instances, report.exact, report.seconds);
    if (false_count) flags.exit_code = 1;
  });
}

}  // namespace graphsub
