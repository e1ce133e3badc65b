#pragma once
// The generator's prover: the Z3 verifier of src/verify, over the axioms of
// specs/operators.axioms (a numeric test on small shapes first, then the solver).
#include "gen/cluster.h"
#include "gen/prove/prover.h"
#include "verify/verifier.h"

namespace graphsub::gen {

// Z3's resource limit per rule output for generation (`generate --rlimit`), the prover's only
// bound (a count, so the library does not depend on load). Calibrated on the shipped library
// (`generate --max-ops 3`): its proofs take at most 5,557 resources, the checks left unknown
// at most 11,129 (at most 0.5 s on a loaded core); about ten times the proofs' need, it writes
// the same library as no limit.
inline constexpr unsigned kDefaultRlimit = 50000;

// Rules per proof epoch: above the shipped library's 27,370 verifier calls (its lanes are
// never reset), about 8 epochs at N = 4 (417,381 calls).
inline constexpr uint64_t kProofEpochRules = 50000;

// Proves batches with `v.verify_all` (in parallel, progress through `rep`); the reason of a
// rule not proved is the verdict and the verifier's explanation. On several ranks each rank
// checks the rules of its verifier lanes (verify::LaneShare) and the outcomes are
// all-gathered: each lane sees the same rules in the same order as in one process, so every
// verdict, and the library, is the same on any number of ranks.
//
// Proof epochs: the batches in order, grouped into epochs of at least kProofEpochRules rules,
// each started with fresh lane sessions (verify::Verifier::reset_sessions). With a run
// directory, rank 0 keeps each finished epoch's outcomes (RUN/proofs-K), and a resumed run
// replays the kept epochs without the solver: the first epoch it proves starts from fresh
// sessions, as in the run it resumes, so its verdicts are the same.
Prover verifier_prover(const verify::Verifier& v, Reporter& rep,
                       Cluster& cluster = single_process(), const std::string& run_dir = "",
                       uint64_t epoch_rules = kProofEpochRules);

// One rank's outcomes as bytes, and back (for the all-gather).
std::string outcomes_bytes(const std::vector<std::pair<uint64_t, ProofOutcome>>& outcomes);
std::vector<std::pair<uint64_t, ProofOutcome>> outcomes_from_bytes(const std::string& bytes);

}  // namespace graphsub::gen
