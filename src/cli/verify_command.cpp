// `graphsub verify FILE.rules`: proves every rule of a rule file from the axioms with Z3,
// after a quick numerical test; one line per rule, then a summary. Exit status 1 when some
// rule is not proved.
#include <fmt/format.h>

#include <algorithm>

#include "cli/commands.h"
#include "cli/terminal_reporter.h"
#include "rules/rule_parser.h"
#include "verify/verifier.h"

namespace graphsub {

void add_verify_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand("verify", "prove the rules of a rule file from the axioms (Z3)");
  static std::string file, axioms_path;
  static unsigned timeout_ms = 10000;
  static int threads = 0;
  static bool no_numeric = false, times = false, reuse_context = false;
  cmd->add_option("file", file, "rule file (rules/*.rules)")->required();
  cmd->add_option("--axioms", axioms_path, "axioms file (default: specs/operators.axioms)");
  cmd->add_option("--timeout-ms", timeout_ms, "time limit per rule in milliseconds")
      ->capture_default_str();
  static unsigned rlimit = 0;
  cmd->add_option("--rlimit", rlimit,
                  "Z3 resource limit per output, deterministic unlike the time limit (0: none)");
  cmd->add_option("--threads", threads, "worker threads (default: all cores)");
  cmd->add_flag("--no-numeric", no_numeric, "skip the numerical test before the solver");
  cmd->add_flag("--reuse-context", reuse_context,
                "one Z3 solver per thread holding the axioms; each rule in its own push/pop scope");
  cmd->add_flag("--times", times, "print the time of each rule (output then varies run to run)");
  cmd->callback([&flags] {
    std::string ax = axioms_path.empty() ? rules::default_axioms_path() : axioms_path;
    rules::RuleSet axioms = rules::load_rules(ax);
    rules::RuleSet set = rules::load_rules(file, &axioms);
    verify::VerifyOptions opts;
    opts.timeout_ms = timeout_ms;
    opts.rlimit = rlimit;
    opts.threads = threads;
    opts.numeric_test = !no_numeric;
    opts.reuse_context = reuse_context;
    verify::Verifier verifier(std::move(axioms), opts);
    TerminalReporter rep(flags.quiet);
    auto verdicts = verifier.verify_all(set.rules, rep);

    size_t width = 0;
    for (auto& v : verdicts) width = std::max(width, v.name.size());
    std::map<verify::Verdict, size_t> counts;
    std::vector<double> ms;
    for (auto& v : verdicts) {
      ++counts[v.verdict];
      ms.push_back(v.total_ms());
      std::string time = times ? fmt::format("  {:8.1f} ms (numeric {:.1f}, solver {:.1f})",
                                             v.total_ms(), v.numeric_ms, v.solver_ms)
                               : "";
      if (v.proved())
        fmt::print("proved      {:<{}}{}\n", v.name, width, time);
      else
        fmt::print("NOT PROVED  {:<{}}{}  {}: {}\n", v.name, width, time,
                   verify::verdict_name(v.verdict), v.reason);
    }
    size_t proved = counts[verify::Verdict::Proved];
    fmt::print(
        "{} rules from {}: {} proved, {} not proved ({} counterexample, {} unknown, {} timeout, {} "
        "invalid)\n",
        verdicts.size(), file, proved, verdicts.size() - proved,
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
