#pragma once
// The generator's prover: the Z3 verifier of src/verify, over the axioms of
// specs/operators.axioms (a numeric test on small shapes first, then the solver).
#include "gen/prove/prover.h"
#include "verify/verifier.h"

namespace graphsub::gen {

// Z3's resource limit per rule output for generation (`generate --rlimit`), the prover's only
// bound (a count, so the library does not depend on load). Calibrated on the shipped library
// (`generate --max-ops 3`): its proofs take at most 5,557 resources, the checks left unknown
// at most 11,129 (at most 0.5 s on a loaded core); about ten times the proofs' need, it writes
// the same library as no limit.
inline constexpr unsigned kDefaultRlimit = 50000;

// Proves batches with `v.verify_all` (in parallel, progress through `rep`); the reason of a
// rule not proved is the verdict and the verifier's explanation.
Prover verifier_prover(const verify::Verifier& v, Reporter& rep);

}  // namespace graphsub::gen
