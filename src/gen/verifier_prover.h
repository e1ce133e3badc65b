#pragma once
// The generator's prover: the Z3 verifier of src/verify, over the axioms of
// specs/operators.axioms (a numeric test on small shapes first, then the solver).
#include "gen/generator.h"
#include "verify/verifier.h"

namespace graphsub::gen {

// Proves batches with `v.verify_all` (in parallel, progress through `rep`); the reason of a
// rule not proved is the verdict and the verifier's explanation.
Prover verifier_prover(const verify::Verifier& v, Reporter& rep);

}  // namespace graphsub::gen
