#include "gen/prove/verifier_prover.h"

#include <fmt/format.h>

#include <memory>
#include <optional>

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

namespace {

constexpr uint64_t kProofsMagic = 0x677375627072667aULL;  // "gsubprfz"

// The batches of one epoch, as kept in RUN/proofs-K.
std::string epoch_bytes(const std::vector<std::vector<ProofOutcome>>& batches) {
  ByteWriter w;
  w.put(kProofsMagic);
  w.put<uint64_t>(batches.size());
  for (const auto& b : batches) {
    std::vector<std::pair<uint64_t, ProofOutcome>> indexed;
    for (size_t k = 0; k < b.size(); ++k) indexed.emplace_back(k, b[k]);
    w.put_string(outcomes_bytes(indexed));
  }
  return std::move(w.bytes());
}

std::vector<std::vector<ProofOutcome>> epoch_from_bytes(const std::string& bytes,
                                                        const std::string& what) {
  ByteReader in(bytes, what);
  if (in.get<uint64_t>() != kProofsMagic) throw Error(what + ": not a proof epoch of this program");
  std::vector<std::vector<ProofOutcome>> batches(in.get<uint64_t>());
  for (auto& b : batches)
    for (auto& [k, o] : outcomes_from_bytes(in.get_string())) {
      if (k != b.size()) throw Error(what + ": damaged proof epoch");
      b.push_back(std::move(o));
    }
  return batches;
}

// The epochs of one run: where the batches are, and the kept ones to replay.
struct Epochs {
  std::string dir;  // "" : nothing kept
  size_t epoch = 0;
  uint64_t rules = 0;                             // in the current epoch
  std::vector<std::vector<ProofOutcome>> proved;  // this epoch's batches, to keep
  std::vector<std::vector<ProofOutcome>> kept;    // this epoch's batches found kept
  size_t next_kept = 0;
  bool loaded = false;

  std::string path(size_t k) const { return fmt::format("{}/proofs-{}", dir, k); }
  void load() {
    kept.clear();
    next_kept = 0;
    if (dir.empty()) return;
    if (std::optional<std::string> b = read_file_if_any(path(epoch)))
      kept = epoch_from_bytes(*b, path(epoch));
  }
};

}  // namespace

Prover verifier_prover(const verify::Verifier& v, Reporter& rep, Cluster& cluster,
                       const std::string& run_dir, uint64_t epoch_rules) {
  auto epochs = std::make_shared<Epochs>();
  epochs->dir = run_dir;
  auto prove_here = [&v, &rep, &cluster](const std::vector<rules::Rule>& batch) {
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
  return [&v, &cluster, epochs, prove_here, epoch_rules](const std::vector<rules::Rule>& batch) {
    Epochs& e = *epochs;
    if (!e.loaded) {
      e.load();
      e.loaded = true;
    }
    if (e.rules >= epoch_rules) {
      // The epoch is over: keep it (one rank writes), start the next from fresh sessions.
      if (!e.dir.empty() && e.next_kept == 0 && cluster.rank() == 0)
        write_file_whole(e.path(e.epoch), epoch_bytes(e.proved));
      ++e.epoch;
      e.rules = 0;
      e.proved.clear();
      v.reset_sessions();
      e.load();
    }
    e.rules += batch.size();
    if (e.next_kept < e.kept.size()) {
      std::vector<ProofOutcome> out = e.kept[e.next_kept++];
      if (out.size() != batch.size())
        throw Error(
            fmt::format("{}: kept proofs of another run (a batch of {} rules, here {}); "
                        "remove the run directory",
                        e.path(e.epoch), out.size(), batch.size()));
      return out;
    }
    if (!e.kept.empty())
      throw Error(
          fmt::format("{}: kept proofs of another run (fewer batches than here); remove "
                      "the run directory",
                      e.path(e.epoch)));
    std::vector<ProofOutcome> out = prove_here(batch);
    if (!e.dir.empty()) e.proved.push_back(out);
    return out;
  };
}

}  // namespace graphsub::gen
