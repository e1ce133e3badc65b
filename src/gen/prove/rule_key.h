#pragma once
// A rule's canonical key (Equality::key) as 128 bits: the prover's books hold hundreds of
// thousands of verdicts at N = 4, and the texts themselves (about 150 bytes each, held in
// several maps) were most of the generator's memory while proving. At 2^-128 per pair, the
// chance that two of a million keys collide is about 10^-27.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace graphsub::gen {

struct RuleKey {
  uint64_t lo = 0, hi = 0;
  bool operator==(const RuleKey&) const = default;
};

struct RuleKeyHash {
  size_t operator()(const RuleKey& k) const { return static_cast<size_t>(k.lo); }
};

RuleKey rule_key(std::string_view key_text);

}  // namespace graphsub::gen
