#include "gen/prove/verifier_prover.h"

#include <fmt/format.h>

#include "core/error.h"
#include "gen/shard_files.h"

namespace graphsub::gen {

namespace {

ProofOutcome outcome_of(verify::RuleVerdict& r) {
  ProofOutcome o;
  o.proved = r.proved();
  o.refuted = r.verdict == verify::Verdict::Counterexample;
  o.kind = verify::verdict_name(r.verdict);
  o.numeric_ms = r.numeric_ms;
  o.solver_ms = r.solver_ms;
  o.resources = r.resources;
  if (!o.proved)
    o.reason = r.reason.empty() ? verify::verdict_name(r.verdict)
                                : fmt::format("{}: {}", verify::verdict_name(r.verdict), r.reason);
  return o;
}

}  // namespace

std::string outcomes_bytes(const std::vector<std::pair<uint64_t, ProofOutcome>>& outcomes) {
  ByteWriter w;
  w.put<uint64_t>(outcomes.size());
  for (const auto& [k, o] : outcomes) {
    w.put(k);
    w.put<uint8_t>(o.proved);
    w.put<uint8_t>(o.refuted);
    w.put_string(o.reason);
    w.put_string(o.kind);
    w.put(o.numeric_ms);
    w.put(o.solver_ms);
    w.put(o.resources);
  }
  return std::move(w.bytes());
}

std::vector<std::pair<uint64_t, ProofOutcome>> outcomes_from_bytes(const std::string& bytes) {
  ByteReader in(bytes, "proof outcomes");
  std::vector<std::pair<uint64_t, ProofOutcome>> out(in.get<uint64_t>());
  for (auto& [k, o] : out) {
    k = in.get<uint64_t>();
    o.proved = in.get<uint8_t>() != 0;
    o.refuted = in.get<uint8_t>() != 0;
    o.reason = in.get_string();
    o.kind = in.get_string();
    o.numeric_ms = in.get<double>();
    o.solver_ms = in.get<double>();
    o.resources = in.get<uint64_t>();
  }
  return out;
}

Prover verifier_prover(const verify::Verifier& v, Reporter& rep, Cluster& cluster) {
  return [&v, &rep, &cluster](const std::vector<rules::Rule>& batch) {
    verify::LaneShare share{cluster.rank(), cluster.size()};
    std::vector<verify::RuleVerdict> verdicts = v.verify_all(batch, rep, share);
    std::vector<ProofOutcome> out(verdicts.size());
    if (cluster.size() == 1) {
      for (size_t k = 0; k < verdicts.size(); ++k) out[k] = outcome_of(verdicts[k]);
      return out;
    }
    std::vector<std::pair<uint64_t, ProofOutcome>> mine;
    for (size_t k = 0; k < verdicts.size(); ++k)
      if (share.owns_rule(k)) mine.emplace_back(k, outcome_of(verdicts[k]));
    size_t filled = 0;
    for (const std::string& bytes : cluster.all_gather(outcomes_bytes(mine)))
      for (auto& [k, o] : outcomes_from_bytes(bytes)) {
        if (k >= out.size()) throw Error("a rank sent an outcome for a rule not in the batch");
        out[k] = std::move(o);
        ++filled;
      }
    if (filled != out.size())
      throw Error(fmt::format("the ranks returned {} outcomes for a batch of {} rules", filled,
                              out.size()));
    return out;
  };
}

}  // namespace graphsub::gen
