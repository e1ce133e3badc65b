// `graphsub unfold`: the rules that introduce fused operators, from the axioms that define them
// (driver/unfold_job.h).
#include <fmt/format.h>

#include <memory>

#include "cli/commands.h"
#include "cli/terminal_reporter.h"
#include "driver/unfold_job.h"

namespace graphsub {

void add_unfold_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand(
      "unfold", "unfold fused terms by their defining axioms, vary the forms, prove, write rules");
  auto o = std::make_shared<driver::UnfoldJobOptions>();
  cmd->add_option("--term", o->terms,
                  "a fused term, a parameter variable of domain D named ?p_D "
                  "(\"(ort_mha_heads ?p_heads 1 ?q ?k ?v)\"; repeatable)")
      ->required();
  cmd->add_option("--unfold", o->unfold,
                  "the axioms that define the fused terms, comma-separated, read left to right")
      ->required();
  cmd->add_option("--via", o->via,
                  "axioms that vary the unfolded forms, comma-separated (NAME~rev: right to "
                  "left)");
  cmd->add_option("--depth", o->depth, "applications of --via axioms on the way to a form")
      ->capture_default_str();
  cmd->add_option("--axioms", o->axioms, "axioms file (default: specs/operators.axioms)");
  cmd->add_option("--rlimit", o->rlimit, "Z3 resource limit per rule output (default: generate's)");
  cmd->add_option("--threads", o->threads, "worker threads (default: all cores)");
  cmd->add_option("-o,--output", o->output, "rule library to write")->required();
  cmd->callback([o, &flags] {
    TerminalReporter rep(flags.quiet);
    driver::UnfoldJobResult job = driver::run_unfold_job(*o, rep);
    if (flags.quiet) return;
    fmt::print("{} fused terms unfolded, {} forms, {} equalities proved, written to {}\n",
               job.unfolded.unfolded, job.unfolded.forms, job.proved, o->output);
  });
}

}  // namespace graphsub
