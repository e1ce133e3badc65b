// `graphsub generate`: enumerates graphs over the generator operators, finds the pairs with
// equal fingerprints, re-tests and proves them, prunes, and writes a rule library.
#include <fmt/format.h>
#include <malloc.h>

#include <fstream>
#include <thread>

#include "cli/commands.h"
#include "cli/terminal_reporter.h"
#include "gen/library_file.h"
#include "gen/verifier_prover.h"
#include "ir/error.h"
#include "ir/text.h"
#include "rules/rule_parser.h"

namespace graphsub {

namespace {

// "act=none,relu" or "poolavg.kernel=3": restricts a declared domain (for one operator).
void apply_param_override(const std::string& spec, gen::ParamDomains& d) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error(fmt::format("--params '{}': expected NAME=V1,V2 or OP.NAME=V1,V2", spec));
  std::string key = spec.substr(0, eq);
  std::string domain = key.substr(key.find('.') == std::string::npos ? 0 : key.find('.') + 1);
  auto it = d.find(domain);
  if (it == d.end())
    throw Error(fmt::format("--params '{}': no domain '{}' is declared", spec, domain));
  std::vector<AxiomParam> values;
  for (auto& v : split_list(spec.substr(eq + 1), ',')) {
    AxiomParam p = v;
    try {
      size_t used = 0;
      int64_t i = std::stoll(v, &used);
      if (used == v.size()) p = i;
    } catch (const std::logic_error&) {
    }
    if (std::find(it->second.begin(), it->second.end(), p) == it->second.end())
      throw Error(
          fmt::format("--params '{}': '{}' is not in the declared domain '{}'", spec, v, domain));
    values.push_back(p);
  }
  if (values.empty()) throw Error(fmt::format("--params '{}': no values", spec));
  d[key] = values;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot write '{}'", path));
  f << text;
  if (!f) throw Error(fmt::format("error writing '{}'", path));
}

}  // namespace

void add_generate_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand(
      "generate", "enumerate graphs, find equal pairs by fingerprint, prove them, write rules");
  static int max_ops = 3;
  static std::string ops_list, pool_spec, axioms_path, out, unproved_path;
  static std::vector<std::string> params;
  static int threads = 0;
  static uint64_t seed = 1;
  static unsigned timeout_ms = 5000;
  static unsigned rlimit = 0;
  static size_t parts = 0;
  static int reduce_from = 4;
  static int max_vars = 5;
  static int minimal_reads_from = 4;
  cmd->add_option("--max-ops", max_ops, "largest graph, in operators (1 to 4)")->required();
  cmd->add_option("--ops", ops_list,
                  "operators to use, comma-separated axiom names (default: all)");
  cmd->add_option("--threads", threads, "worker threads (default: all cores)");
  cmd->add_option("--seed", seed, "seed of the fingerprint and re-test inputs");
  cmd->add_option("--params", params,
                  "restrict a parameter domain: NAME=V1,V2 or OP.NAME=V1,V2 (repeatable)");
  cmd->add_option("--pool", pool_spec, "input tensors: name:2x4:data,w:4x4:weight,s:scalar,...");
  cmd->add_option("--axioms", axioms_path, "axioms file (default: specs/operators.axioms)");
  cmd->add_option("--timeout-ms", timeout_ms, "verifier time limit per rule");
  cmd->add_option("--rlimit", rlimit,
                  "Z3 resource limit per rule output, deterministic unlike the time limit "
                  "(0: none)");
  cmd->add_option("--unproved", unproved_path,
                  "report of candidates not proved (default: OUT with .unproved)");
  cmd->add_option("--parts", parts,
                  "debug/measurement: classify only the first N of the 256 fingerprint ranges "
                  "and the same share of the split requests (0: all); the library then covers "
                  "those only");
  cmd->add_option("--reduce-from", reduce_from,
                  "classify candidates with a side of this many operators or more in their "
                  "reduced form (common subgraphs taken out; default 4)");
  cmd->add_option("--minimal-reads-from", minimal_reads_from,
                  "from this --max-ops on, the largest graphs read no value that a smaller "
                  "graph computes (default 4; 0: never)");
  cmd->add_option("--max-vars", max_vars,
                  "rules with more tensor variables are not sent to the prover (default 5; 0: "
                  "no limit)");
  cmd->add_option("-o,--output", out, "rule library to write")->required();
  cmd->callback([&flags] {
    // For builds on glibc's allocator (GRAPHSUB_TCMALLOC=OFF; the default build links
    // tcmalloc, where this does nothing): a verifier call without a kept context builds and
    // frees a fresh Z3 context (tens of MiB). With glibc's default 128 KiB top pad the heap is
    // grown and trimmed back on every call, and the page faults cost several times the proof
    // itself (measured: 237 rules on one thread, 15 s with the default, 1.5 s with this pad;
    // docs/benchmarks.md, Generator). Untouched pad pages are not resident, so peak memory
    // does not grow.
    mallopt(M_TOP_PAD, 256 << 20);
    int t =
        threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::string axioms_file = axioms_path.empty() ? rules::default_axioms_path() : axioms_path;
    rules::RuleSet axioms = rules::load_rules(axioms_file);

    gen::GeneratorOptions opts;
    opts.max_ops = max_ops;
    opts.ops = split_list(ops_list, ',');
    opts.threads = t;
    opts.seed = seed;
    opts.domains = gen::domains_of(axioms);
    for (auto& p : params) apply_param_override(p, opts.domains);
    opts.lift_domains = opts.domains;
    opts.pool = pool_spec.empty() ? gen::default_pool() : gen::parse_pool(pool_spec);
    opts.max_parts = parts;
    opts.reduce_from_ops = reduce_from;
    opts.max_prover_vars = max_vars;
    opts.minimal_reads_from_ops = minimal_reads_from;

    // The command as the header states it: every flag that shapes the output, in one order.
    std::string command = fmt::format("graphsub generate --max-ops {}", max_ops);
    if (!ops_list.empty()) command += " --ops " + ops_list;
    for (auto& p : params) command += " --params " + p;
    if (!pool_spec.empty()) command += " --pool " + pool_spec;
    if (!axioms_path.empty()) command += " --axioms " + axioms_path;
    command += fmt::format(" --seed {} --timeout-ms {}", seed, timeout_ms);
    if (rlimit) command += fmt::format(" --rlimit {}", rlimit);
    if (parts) command += fmt::format(" --parts {}", parts);
    if (reduce_from != 4) command += fmt::format(" --reduce-from {}", reduce_from);
    if (minimal_reads_from != 4)
      command += fmt::format(" --minimal-reads-from {}", minimal_reads_from);
    if (max_vars != 5) command += fmt::format(" --max-vars {}", max_vars);
    command += " -o " + out;

    TerminalReporter rep(flags.quiet);
    verify::VerifyOptions vo;
    vo.timeout_ms = timeout_ms;
    vo.rlimit = rlimit;
    vo.threads = t;
    vo.seed = seed;
    // Every candidate type-checks with its variables at pool shapes: the numeric test's
    // fallback tries those before the axioms' whole shape space.
    for (auto& p : opts.pool) {
      TensorType t{.shape = p.shape};
      if (std::find(vo.fallback_types.begin(), vo.fallback_types.end(), t) ==
          vo.fallback_types.end())
        vo.fallback_types.push_back(t);
    }
    // Verdicts were checked to be the same with a fresh context per rule, in any order
    // (docs/benchmarks.md, Generator); the reuse saves about 3 ms of each call. Not with a
    // resource limit, whose count might then carry over from earlier rules in the context.
    vo.reuse_context = rlimit == 0;
    verify::Verifier verifier(axioms, vo);
    gen::GeneratorResult res = gen::run_generator(opts, gen::verifier_prover(verifier, rep), rep);

    gen::LibraryInfo info{command, gen::pool_str(opts.pool), axioms_file};
    write_file(out, gen::library_text(res, info));
    std::string report = unproved_path;
    if (report.empty()) {
      report = out;
      if (report.size() > 6 && report.substr(report.size() - 6) == ".rules")
        report.resize(report.size() - 6);
      report += ".unproved";
    }
    write_file(report, gen::unproved_text(res, info));

    if (!flags.quiet) {
      double enum_s = res.stages.empty() ? 0 : res.stages.front().seconds;
      fmt::print("{} operator variants, {} pool tensors, {} threads\n", res.variants.size(),
                 opts.pool.size(), t);
      fmt::print("graphs enumerated per second: {:.0f}\n",
                 enum_s > 0 ? static_cast<double>(res.graphs) / enum_s : 0.0);
      fmt::print(
          "verifier calls: {} ({} for common-subgraph generalizations; {} candidate classes "
          "implied by proven rules, {} more general rules found by pruning, {} classes proved "
          "under shape conditions, {} classes not tried: a more general form was not "
          "proved)\n",
          res.verifier_calls, res.generalization_calls, res.implied, res.generalized,
          res.conditional, res.not_tried);
      fmt::print(
          "{} rules ({} with parameter variables) written to {}; {} unproved candidates "
          "listed in {}\n",
          res.rules.size(), res.lifted, out, res.unproved.size(), report);
      // Thread time: on T threads the wall time of proving is about the sum over T.
      for (auto& [kind, pt] : res.prover_times)
        fmt::print(
            "prover {:<15} {:>7} calls, per call median {:.1f} ms, max {:.0f} ms; total numeric "
            "pre-test {:.1f} s, solver {:.1f} s (thread time)\n",
            kind, pt.calls, pt.median_ms, pt.max_ms, pt.numeric_ms / 1000, pt.solver_ms / 1000);
      fmt::print("total {:.1f} s, peak memory {:.0f} MiB\n", res.seconds,
                 static_cast<double>(res.peak_rss_bytes) / (1024.0 * 1024.0));
    }
  });
}

}  // namespace graphsub
