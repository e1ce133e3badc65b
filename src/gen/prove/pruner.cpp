#include "gen/prove/pruner.h"

#include <algorithm>

#include "gen/classify/common_subgraph.h"
#include "gen/prove/rule_owner.h"
#include "gen/shard_files.h"

namespace graphsub::gen {

std::vector<ProofOutcome> Pruner::prove(const std::vector<BatchItem>& items) {
  std::vector<ProofOutcome> out = prove_all(prove_, items, max_vars_, calls_, times_, checks_here_);
  for (auto& o : out) too_many_vars_ += o.kind == kTooManyVars;
  return out;
}

std::vector<ProofOutcome> Pruner::prove(const std::vector<const Equality*>& eqs) {
  std::vector<BatchItem> items;
  items.reserve(eqs.size());
  for (const Equality* e : eqs) items.push_back(batch_item(*e, max_vars_));
  return prove(items);
}

bool Pruner::decided(const RuleKey& k) const {
  auto it = book_.find(k);
  return it != book_.end() && it->second.verdict >= 0;
}

const Equality& Pruner::pending(const std::string& key) {
  RuleKey k = rule_key(key);
  auto it = pending_.find(k);
  if (it == pending_.end()) it = pending_.emplace(k, equality_from_key(key)).first;
  return it->second;
}

void Pruner::mark_key(const std::string& key, bool valid, bool redundant) {
  RuleKey k = rule_key(key);
  Entry& entry = book_[k];
  entry.verdict = valid ? 1 : 0;
  entry.redundant = entry.redundant || redundant;
  if (valid) valid_.emplace(k, key);
  pending_.erase(k);
}

void Pruner::defer_mark(const std::string& key, bool valid, bool redundant) {
  held_.push_back({key, valid, redundant});
}

std::set<std::string> Pruner::exchange(const std::set<std::string>& open) {
  if (cluster_.size() == 1) {
    for (auto& m : held_) mark_key(m.key, m.valid, m.redundant);
    held_.clear();
    return open;
  }
  ByteWriter w;
  w.put<uint64_t>(held_.size());
  for (auto& m : held_) {
    w.put_string(m.key);
    w.put<uint8_t>(static_cast<uint8_t>(m.valid | (m.redundant << 1)));
  }
  held_.clear();
  w.put<uint64_t>(open.size());
  for (auto& k : open) w.put_string(k);
  std::set<std::string> all;
  std::vector<std::string> got = cluster_.all_gather(w.bytes());
  std::string().swap(w.bytes());
  for (std::string& bytes : got) {
    ByteReader in(bytes, "a rank's verdicts");
    for (uint64_t n = in.get<uint64_t>(); n > 0; --n) {
      std::string key = in.get_string();
      uint8_t flags = in.get<uint8_t>();
      mark_key(key, flags & 1, flags & 2);
    }
    for (uint64_t n = in.get<uint64_t>(); n > 0; --n) all.insert(in.get_string());
    std::string().swap(bytes);  // read: freed before the next rank's are
  }
  return all;
}

const std::vector<RuleKey>& Pruner::generalizations(const Equality& e) {
  RuleKey ek = rule_key(e.key);
  auto it = gens_.find(ek);
  if (it != gens_.end()) return it->second;
  std::vector<Equality> gs = input_generalizations(e);
  if (auto o = output_generalization(e)) gs.push_back(*o);
  std::vector<RuleKey> keys;
  for (auto& g : gs) {
    canonicalize(g);
    if (g.key == e.key) continue;
    RuleKey gk = rule_key(g.key);
    keys.push_back(gk);
    if (!decided(gk)) pending_.emplace(gk, std::move(g));
  }
  return gens_.emplace(ek, std::move(keys)).first->second;
}

bool Pruner::has_valid_generalization(const Equality& e) {
  for (auto& g : generalizations(e)) {
    auto it = book_.find(g);
    if (it != book_.end() && it->second.verdict == 1) return true;
  }
  return false;
}

std::set<std::string> Pruner::undecided_generalizations(const std::vector<const Equality*>& eqs) {
  std::set<std::string> open;
  for (const Equality* e : eqs)
    for (auto& g : generalizations(*e))
      if (!decided(g)) open.insert(pending_.at(g).key);
  return open;
}

void Pruner::resolve_generalizations(const std::set<std::string>& open_in) {
  std::set<std::string> open;
  for (auto& k : open_in)
    if (!decided(rule_key(k))) open.insert(k);
  while (!open.empty()) {
    // Generalizations of the open ones first (they are smaller).
    std::set<std::string> deeper;
    for (auto& k : open)
      for (auto& g : generalizations(pending(k)))
        if (!decided(g) && !open.count(pending_.at(g).key)) deeper.insert(pending_.at(g).key);
    if (!deeper.empty()) {
      // Treat them as the rules whose generalizations must be known, then decide them.
      std::vector<const Equality*> eqs;
      for (auto& k : deeper) eqs.push_back(&pending(k));
      resolve_generalizations(undecided_generalizations(eqs));
      std::vector<std::string> undecided;
      for (auto& k : deeper)
        if (!decided(rule_key(k))) undecided.push_back(k);
      decide(undecided);
      continue;
    }
    decide({open.begin(), open.end()});
    open.clear();
  }
}

std::vector<Equality> Pruner::irredundant() const {
  std::vector<const std::string*> keys;
  for (auto& [k, entry] : book_)
    if (entry.verdict == 1 && !entry.redundant) keys.push_back(&valid_.at(k));
  std::sort(keys.begin(), keys.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  std::vector<Equality> out;
  out.reserve(keys.size());
  for (const std::string* k : keys) out.push_back(equality_from_key(*k, false));
  return out;
}

uint64_t Pruner::generalizations_kept() const {
  uint64_t n = 0;
  for (auto& [k, entry] : book_)
    if (entry.verdict == 1 && !entry.redundant && !entry.is_class &&
        rule_owner(valid_.at(k), cluster_.size()) == cluster_.rank())
      ++n;
  return n;
}

void Pruner::decide(const std::vector<std::string>& keys) {
  std::vector<const Equality*> todo;
  std::vector<std::string> proving;
  for (auto& k : keys) {
    const Equality& e = pending(k);
    if (has_valid_generalization(e)) {
      mark_key(k, true, true);
      continue;
    }
    todo.push_back(&e);
    proving.push_back(k);
  }
  uint64_t before = calls_;
  std::vector<ProofOutcome> out = prove(todo);
  generalization_calls_ += calls_ - before;
  for (size_t i = 0; i < proving.size(); ++i) mark_key(proving[i], out[i].proved, false);
}

}  // namespace graphsub::gen
