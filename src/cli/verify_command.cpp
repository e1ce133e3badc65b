// `graphsub verify FILE.rules`: proves every rule of a rule file from the axioms with Z3,
// after a quick numerical test; one line per rule, then a summary. Exit status 1 when some
// rule is not proved.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "cli/terminal_reporter.h"
#include "driver/rule_jobs.h"

namespace graphsub {

void add_verify_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand("verify", "prove the rules of a rule file from the axioms (Z3)");
  struct VerifyCommandOptions {
    driver::VerifyJobOptions job;
    bool no_numeric = false, times = false;
  };
  auto c = std::make_shared<VerifyCommandOptions>();
  auto& o = c->job;
  cmd->add_option("file", o.file, "rule file (rules/*.rules)")->required();
  cmd->add_option("--axioms", o.axioms, "axioms file (default: specs/operators.axioms)");
  cmd->add_option("--timeout-ms", o.timeout_ms, "time limit per rule in milliseconds")
      ->capture_default_str();
  cmd->add_option("--rlimit", o.rlimit,
                  "Z3 resource limit per output, deterministic unlike the time limit (0: none)");
  cmd->add_option("--threads", o.threads, "worker threads (default: all cores)");
  cmd->add_flag("--no-numeric", c->no_numeric, "skip the numerical test before the solver");
  cmd->add_flag("--reuse-context", o.reuse_context,
                "one Z3 solver per thread holding the axioms; each rule in its own push/pop scope");
  cmd->add_flag("--times", c->times, "print the time of each rule (output then varies run to run)");
  cmd->callback([c, &flags] {
    c->job.numeric = !c->no_numeric;
    c->job.count_resources = c->times;
    TerminalReporter rep(flags.quiet);
    driver::VerifyJobResult res = driver::run_verify_job(c->job, rep);
    const auto& verdicts = res.verdicts;
    const bool times = c->times;

    size_t width = 0;
    for (auto& v : verdicts) width = std::max(width, v.name.size());
    std::map<verify::Verdict, size_t> counts;
    std::vector<double> ms;
    for (auto& v : verdicts) {
      ++counts[v.verdict];
      ms.push_back(v.total_ms());
      std::string time =
          times ? fmt::format("  {:8.1f} ms (numeric {:.1f}, solver {:.1f}, {} Z3 resources)",
                              v.total_ms(), v.numeric_ms, v.solver_ms, v.resources)
                : "";
      if (v.proved())
        fmt::print("proved      {:<{}}{}\n", v.name, width, time);
      else
        fmt::print("NOT PROVED  {:<{}}{}  {}: {}\n", v.name, width, time,
                   verify::verdict_name(v.verdict), v.reason);
    }
    size_t proved = res.proved();
    fmt::print(
        "{} rules from {}: {} proved, {} not proved ({} counterexample, {} unknown, {} timeout, {} "
        "invalid)\n",
        verdicts.size(), res.file, proved, verdicts.size() - proved,
        counts[verify::Verdict::Counterexample], counts[verify::Verdict::Unknown],
        counts[verify::Verdict::Timeout], counts[verify::Verdict::Invalid]);
    if (times && !ms.empty()) {
      std::sort(ms.begin(), ms.end());
      fmt::print("time per rule: median {:.1f} ms, max {:.1f} ms\n", ms[ms.size() / 2], ms.back());
    }
    if (proved != verdicts.size()) flags.exit_code = 1;
  });
}

}  // namespace graphsub
