// `graphsub generate`: enumerates graphs over the generator operators, finds the pairs with
// equal fingerprints, re-tests and proves them, prunes, and writes a rule library
// (driver/generate_job.h).
#include <fmt/format.h>

#include <memory>

#include "cli/commands.h"
#include "cli/terminal_reporter.h"
#include "driver/generate_job.h"

namespace graphsub {

void add_generate_command(CLI::App& app, GlobalFlags& flags) {
  auto* cmd = app.add_subcommand(
      "generate", "enumerate graphs, find equal pairs by fingerprint, prove them, write rules");
  auto o = std::make_shared<driver::GenerateJobOptions>();
  cmd->add_option("--max-ops", o->max_ops, "largest graph, in operators (1 to 5)")->required();
  cmd->add_option("--ops", o->ops, "operators to use, comma-separated axiom names (default: all)");
  cmd->add_option("--with-ops", o->with_ops,
                  "keep only the rules that use one of these operators (default: all rules)");
  cmd->add_option("--threads", o->threads, "worker threads (default: all cores)");
  cmd->add_option("--seed", o->seed, "seed of the fingerprint and re-test inputs");
  cmd->add_option("--params", o->params,
                  "restrict a parameter domain: NAME=V1,V2 or OP.NAME=V1,V2 (repeatable)");
  cmd->add_option("--pool", o->pool,
                  "input tensors: name:2x4:data,w:4x4:weight,s:scalar,... (a fourth field, "
                  "name:1x2x4:data:1x3x6, gives the shape of the numerical re-test)");
  cmd->add_option("--axioms", o->axioms, "axioms file (default: specs/operators.axioms)");
  cmd->add_option("--rlimit", o->rlimit,
                  "Z3 resource limit per rule output: what bounds the prover, the same on any "
                  "machine and load (0: none)")
      ->capture_default_str();
  // Seconds on the command line, milliseconds in the job (and in the Python API).
  auto safety_s = std::make_shared<unsigned>(o->timeout_ms / 1000);
  cmd->add_option("--safety-timeout-s", *safety_s,
                  "a prover check still running after this many seconds is an error (a safety "
                  "net behind --rlimit; the library never depends on time)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 86400u));
  cmd->add_option("--unproved", o->unproved,
                  "report of candidates not proved (default: OUT with .unproved)");
  cmd->add_option("--parts", o->parts,
                  "debug/measurement: classify only the first N of the 256 fingerprint ranges "
                  "and the same share of the split requests (0: all); the library then covers "
                  "those only");
  cmd->add_option("--shards", o->shards,
                  "measurement: K/R enumerates the largest graphs of the shares of ranks 0 to "
                  "K-1 of an R-rank run only (every smaller graph whole), in one process; the "
                  "library then covers what that fraction finds");
  cmd->add_option("--reduce-from", o->reduce_from,
                  "classify candidates with a side of this many operators or more in their "
                  "reduced form (common subgraphs taken out)")
      ->capture_default_str();
  cmd->add_option("--minimal-reads-from", o->minimal_reads_from,
                  "from this --max-ops on, the largest graphs read no value that a smaller "
                  "graph computes (0: never)")
      ->capture_default_str();
  cmd->add_option("--max-vars", o->max_vars,
                  "rules with more tensor variables are not sent to the prover (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--run-dir", o->run_dir,
                  "keep each rank's share of the run in this folder, so that a stopped run "
                  "resumes (default on several MPI ranks: OUT.run; removed when done)");
  cmd->add_flag("--keep-run-dir", o->keep_run_dir, "keep the run folder after success");
  cmd->add_option("--proof-epoch", o->proof_epoch,
                  "verifier calls per proof epoch (each starts from fresh solver sessions; a "
                  "run stopped while proving resumes from its last kept epoch)");
  cmd->add_option("-o,--output", o->output, "rule library to write")->required();
  cmd->callback([o, safety_s, &flags] {
    o->timeout_ms = *safety_s * 1000u;
    TerminalReporter rep(flags.quiet);
    driver::GenerateJobResult job = driver::run_generate_job(*o, rep);
    const gen::GeneratorResult& res = job.result;
    if (flags.quiet || job.rank != 0) return;
    double enum_s = res.stages.empty() ? 0 : res.stages.front().seconds;
    fmt::print("{} operator variants, {} pool tensors, {} threads\n", res.variants.size(),
               job.pool_size, job.threads);
    // Not for a resumed run whose enumeration was found kept (it took no time).
    if (enum_s > 0.5)
      fmt::print("graphs enumerated per second: {:.0f}\n",
                 static_cast<double>(res.graphs) / enum_s);
    fmt::print(
        "verifier calls: {} ({} for common-subgraph generalizations; {} candidate classes "
        "implied by proven rules, {} more general rules found by pruning, {} classes proved "
        "under shape conditions, {} classes not tried: a more general form was not "
        "proved)\n",
        res.verifier_calls, res.generalization_calls, res.implied, res.generalized, res.conditional,
        res.not_tried);
    fmt::print(
        "{} rules ({} with parameter variables) written to {}; {} unproved candidates "
        "listed in {}\n",
        res.rules.size(), res.lifted, o->output, res.unproved.size(), job.unproved_path);
    // Thread time: on T threads the wall time of proving is about the sum over T.
    for (auto& [kind, pt] : res.prover_times)
      fmt::print(
          "prover {:<15} {:>7} calls, per call median {:.1f} ms, max {:.0f} ms, max {} Z3 "
          "resources; total numeric pre-test {:.1f} s, solver {:.1f} s (thread time)\n",
          kind, pt.calls, pt.median_ms, pt.max_ms, pt.max_resources, pt.numeric_ms / 1000,
          pt.solver_ms / 1000);
    fmt::print("total {:.1f} s, peak memory {:.0f} MiB\n", res.seconds,
               static_cast<double>(res.peak_rss_bytes) / (1024.0 * 1024.0));
    if (res.ranks.size() > 1)
      for (size_t r = 0; r < res.ranks.size(); ++r)
        fmt::print("rank {} of {}: {:.1f} s, peak memory {:.0f} MiB, {} classes decided\n", r,
                   res.ranks.size(), res.ranks[r].seconds,
                   static_cast<double>(res.ranks[r].peak_rss_bytes) / (1024.0 * 1024.0),
                   res.ranks[r].classes);
  });
}

}  // namespace graphsub
