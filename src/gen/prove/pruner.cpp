#include "gen/prove/pruner.h"

#include "gen/classify/common_subgraph.h"

namespace graphsub::gen {

std::vector<ProofOutcome> Pruner::prove(const std::vector<const Equality*>& eqs) {
  std::vector<ProofOutcome> out = prove_all(prove_, eqs, max_vars_, calls_, times_);
  for (auto& o : out) too_many_vars_ += o.kind == kTooManyVars;
  return out;
}

void Pruner::mark(const Equality& e, bool valid, bool redundant) {
  verdict_[e.key] = valid;
  eqs_.emplace(e.key, e);
  if (redundant) redundant_.insert(e.key);
}

const std::vector<std::string>& Pruner::generalizations(const Equality& e) {
  auto it = gens_.find(e.key);
  if (it != gens_.end()) return it->second;
  std::vector<Equality> gs = input_generalizations(e);
  if (auto o = output_generalization(e)) gs.push_back(*o);
  std::vector<std::string> keys;
  for (auto& g : gs) {
    canonicalize(g);
    if (g.key == e.key) continue;
    keys.push_back(g.key);
    eqs_.emplace(g.key, std::move(g));
  }
  return gens_.emplace(e.key, std::move(keys)).first->second;
}

bool Pruner::has_valid_generalization(const Equality& e) {
  for (auto& g : generalizations(e)) {
    auto it = verdict_.find(g);
    if (it != verdict_.end() && it->second) return true;
  }
  return false;
}

void Pruner::resolve_generalizations(const std::vector<const Equality*>& eqs) {
  std::set<std::string> open;
  for (const Equality* e : eqs)
    for (auto& g : generalizations(*e))
      if (!verdict_.count(g)) open.insert(g);
  while (!open.empty()) {
    // Generalizations of the open ones first (they are smaller).
    std::set<std::string> deeper;
    for (auto& k : open)
      for (auto& g : generalizations(eqs_.at(k)))
        if (!verdict_.count(g) && !open.count(g)) deeper.insert(g);
    if (!deeper.empty()) {
      resolve_generalizations_keys(deeper);
      continue;
    }
    decide({open.begin(), open.end()});
    open.clear();
  }
}

std::vector<Equality> Pruner::irredundant() const {
  std::vector<Equality> out;
  for (auto& [k, valid] : verdict_)
    if (valid && !redundant_.count(k)) out.push_back(eqs_.at(k));
  return out;  // std::map order: by key
}

uint64_t Pruner::generalizations_kept() const {
  uint64_t n = 0;
  for (auto& [k, valid] : verdict_)
    if (valid && !redundant_.count(k) && !classes_.count(k)) ++n;
  return n;
}

void Pruner::resolve_generalizations_keys(const std::set<std::string>& keys) {
  std::vector<const Equality*> eqs;
  for (auto& k : keys) eqs.push_back(&eqs_.at(k));
  // Treat them as the rules whose generalizations must be known, then decide them.
  resolve_generalizations(eqs);
  std::vector<std::string> undecided;
  for (auto& k : keys)
    if (!verdict_.count(k)) undecided.push_back(k);
  decide(undecided);
}

void Pruner::decide(const std::vector<std::string>& keys) {
  std::vector<const Equality*> todo;
  std::vector<std::string> proving;
  for (auto& k : keys) {
    const Equality& e = eqs_.at(k);
    if (has_valid_generalization(e)) {
      mark(e, true, true);
      continue;
    }
    todo.push_back(&e);
    proving.push_back(k);
  }
  uint64_t before = calls_;
  std::vector<ProofOutcome> out = prove(todo);
  generalization_calls_ += calls_ - before;
  for (size_t i = 0; i < proving.size(); ++i) {
    mark(eqs_.at(proving[i]), out[i].proved, false);
    if (out[i].proved) ++generalizations_proved_;
  }
}

}  // namespace graphsub::gen
