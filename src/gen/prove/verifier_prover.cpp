#include "gen/prove/verifier_prover.h"

#include <fmt/format.h>

namespace graphsub::gen {

Prover verifier_prover(const verify::Verifier& v, Reporter& rep) {
  return [&v, &rep](const std::vector<rules::Rule>& batch) {
    std::vector<verify::RuleVerdict> verdicts = v.verify_all(batch, rep);
    std::vector<ProofOutcome> out;
    out.reserve(verdicts.size());
    for (auto& r : verdicts) {
      ProofOutcome o;
      o.proved = r.proved();
      o.refuted = r.verdict == verify::Verdict::Counterexample;
      o.kind = verify::verdict_name(r.verdict);
      o.numeric_ms = r.numeric_ms;
      o.solver_ms = r.solver_ms;
      o.resources = r.resources;
      if (!o.proved)
        o.reason = r.reason.empty()
                       ? verify::verdict_name(r.verdict)
                       : fmt::format("{}: {}", verify::verdict_name(r.verdict), r.reason);
      out.push_back(std::move(o));
    }
    return out;
  };
}

}  // namespace graphsub::gen
