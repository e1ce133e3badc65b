#pragma once
// `graphsub generate` and graphsub.generate(): enumerate graphs, find equal pairs by
// fingerprint, re-test and prove them, prune, and produce a rule library (and the report of
// candidates not proved). The library's header states the command that reproduces it.
#include <cstdint>
#include <string>
#include <vector>

#include "gen/generator.h"
#include "gen/prove/verifier_prover.h"
#include "ir/report.h"

namespace graphsub::driver {

struct GenerateJobOptions {
  int max_ops = 3;
  std::string ops;                  // comma-separated axiom names ("": all)
  std::string with_ops;             // comma-separated: keep rules using one of them ("": all)
  std::vector<std::string> params;  // NAME=V1,V2 or OP.NAME=V1,V2
  std::string pool;                 // "": the default pool
  std::string axioms;               // "": specs/operators.axioms
  std::string output;               // "": keep the texts only (Python)
  std::string unproved;             // "": OUT with .unproved
  int threads = 0;                  // 0: all cores
  uint64_t seed = 1;
  // Z3's resource limit per rule output: what bounds the prover, so that the library is the
  // same on any machine and load (0: none).
  unsigned rlimit = gen::kDefaultRlimit;
  // A safety net behind `rlimit`: a prover check still running after this long is an error
  // (never a verdict, so the library never depends on time). 1 s to 1 day.
  unsigned timeout_ms = 300'000;
  size_t parts = 0;
  // Measurement: "K/R" enumerates the largest graphs of the shares of ranks 0 to K-1 of an
  // R-rank run only (every smaller graph whole), here in one process; the library then holds
  // what that fraction finds ("": every share).
  std::string shards;
  int reduce_from = 4;
  int max_vars = 5;
  int minimal_reads_from = 4;
  // Where each rank's share of the run is kept, so that a stopped or failed run resumes
  // ("": temporary files only; on several ranks OUT.run). Removed after a run that wrote
  // its library, unless keep_run_dir.
  std::string run_dir;
  bool keep_run_dir = false;
  // Rules per proof epoch (gen::kProofEpochRules; verifier_prover): a run killed while
  // proving resumes from its last kept epoch. Shapes the verdicts' solver history, so the
  // header states it when not the default.
  uint64_t proof_epoch = gen::kProofEpochRules;
  // The ranks to run on (null: those of the MPI job that started this process, or this
  // process alone; tests give ranks of their own).
  gen::Cluster* cluster = nullptr;
};

struct GenerateJobResult {
  gen::GeneratorResult result;
  std::string command;            // as the library's header states it
  std::string library, unproved;  // the texts (also written when an output was given)
  std::string unproved_path;      // where the unproved report went ("" without output)
  int threads = 0;
  size_t pool_size = 0;
  int rank = 0, ranks = 1;  // this process among the MPI job's (0 of 1 alone)
  std::string run_dir;      // the run directory used ("" none)
};

// Throws OptionError for bad options (checked before the long run, the output files too),
// Error for bad files.
GenerateJobResult run_generate_job(const GenerateJobOptions& o, Reporter& rep);

}  // namespace graphsub::driver
