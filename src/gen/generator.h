#pragma once
// The substitution generator (TASO's Algorithm 1, design.md section 4): enumerate graphs,
// bucket them by fingerprint, pair the graphs of each bucket, re-test the pairs numerically,
// prove them, and prune the proven rules (renaming, common subgraphs).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gen/classify/equality.h"
#include "gen/cluster.h"
#include "gen/prove/prover.h"
#include "gen/space/gen_op.h"
#include "gen/space/pool.h"
#include "ir/report.h"
#include "rules/rule.h"

namespace graphsub::gen {

struct GeneratorOptions {
  int max_ops = 3;
  std::vector<std::string> ops;  // axiom operator names; empty: all_generator_ops()
  // Only the rules that use one of these operators are kept (empty: all). A library over new
  // operators needs the others to combine with, but their rules among themselves are already
  // in the libraries of their own; repeating them would only slow every match.
  std::vector<std::string> with_ops;
  std::vector<PoolTensor> pool;  // empty: default_pool()
  ParamDomains domains;          // parameter values searched (from specs/operators.axioms)
  // Parameter lifting: classes that cover every searched value of a domain are tried as one
  // rule with a parameter variable, which the prover checks over the domain the axioms
  // declare (it may hold for more values than were searched). Empty: no lifting.
  ParamDomains lift_domains;
  int threads = 2;
  uint64_t seed = 1;
  double tolerance = 1e-5;  // numerical re-test, relative
  // Candidates with a side of this many operators or more are classified in their reduced
  // form (ClassifyOptions::reduce_from_ops).
  int reduce_from_ops = 4;
  // From this max_ops on, the largest graphs only read values no smaller graph computes
  // (Space::minimal_reads). 0: never.
  int minimal_reads_from_ops = 4;
  // Debug and measurement: classify only the first this many of the 256 fingerprint ranges
  // (0: all); the library is then of those ranges only.
  size_t max_parts = 0;
  // Measurement: the largest graphs of the shares of ranks 0 to sample_shards-1 of a run on
  // sample_of ranks only (EnumShard::sample); 0: all.
  int sample_shards = 0, sample_of = 0;
  // Rules with more tensor variables than this are not sent to the prover (reported as not
  // tried): the verifier's instance search grows with every variable, and at max_ops 4 a
  // proving batch ran out of memory in it. Every class at max_ops 3 has 4 or fewer. 0: no limit.
  int max_prover_vars = 5;
  // The processes the run is split over (null: this one alone) and the folder where each
  // rank's share of enumeration, classification and proofs is kept ("" : temporary files, no
  // resuming). Several ranks need a run directory that every rank can read.
  Cluster* cluster = nullptr;
  std::string run_dir;
};

// One rank's share of a run: its time, peak memory and classes.
struct RankFigures {
  double seconds = 0;
  uint64_t peak_rss_bytes = 0;
  uint64_t classes = 0;  // the classes it held and decided (rule_owner)
};

struct StageCount {
  std::string stage;
  uint64_t count = 0;
  double seconds = 0;
};

struct UnprovedRule {
  std::string key;  // the class's canonical key (equality_from_key)
  std::string reason;
  uint64_t pairs = 0;    // candidate pairs in the class
  uint64_t reduced = 0;  // of which larger candidates classified in this reduced form
};

struct GeneratorResult {
  std::vector<StageCount> stages;  // in pipeline order
  std::vector<Equality> rules;     // proven, pruned, canonical, sorted by key
  std::vector<UnprovedRule> unproved;
  uint64_t graphs = 0;                // enumerated (connected graphs, bare variables excluded)
  uint64_t verifier_calls = 0;        // rules sent to the prover (candidates and generalizations)
  uint64_t generalization_calls = 0;  // of which for common-subgraph generalizations
  uint64_t implied = 0;               // candidate classes proved as instances of proven ones
  // Candidate classes not sent to the prover because a more general form of theirs (a class
  // that passed the float re-test) was not proved; reported as unproved.
  uint64_t not_tried = 0;
  uint64_t generalized = 0;  // more general rules found by common-subgraph pruning
  uint64_t lifted = 0;       // rules with parameter variables in the library
  uint64_t conditional = 0;  // classes not proved as stated, proved under shape conditions
  // Candidates that passed the re-test and were classified in a reduced form (common
  // subgraphs taken out), and those that reduced to nothing.
  uint64_t reduced_pairs = 0, vanished_pairs = 0;
  int reduce_from_ops = 0;               // the size from which candidates were reduced (the option)
  bool minimal_reads = false;            // Space::minimal_reads was on
  uint64_t redundant_values = 0;         // EnumStats::redundant (minimal_reads)
  uint64_t unrepresentative_graphs = 0;  // left out for a partial output (minimal_reads)
  uint64_t too_many_vars = 0;            // rules not sent to the prover: over max_prover_vars
  uint64_t classes = 0;                  // classes up to renaming after the re-test
  size_t parts_classified = 0;           // fingerprint ranges classified (of 256)
  std::map<std::string, ProverTimes> prover_times;  // by verdict kind
  double seconds = 0;
  uint64_t peak_rss_bytes = 0;
  std::vector<std::string> variants;  // operator variants searched (labels)
  std::vector<RankFigures> ranks;     // by rank (one entry for a single process)
};

GeneratorResult run_generator(const GeneratorOptions& opts, const Prover& prove, Reporter& rep);

}  // namespace graphsub::gen
