#pragma once
// Canonical structural hashing: a node's hash depends on its operator, attributes, output types
// and the hashes of what it reads, never on node ids or insertion order. Stable across runs
// and machines (XXH3 over a fixed byte encoding).
#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace graphsub {

class Hasher {
 public:
  Hasher& add(uint64_t v);
  Hasher& add(int64_t v) { return add(static_cast<uint64_t>(v)); }
  Hasher& add(std::string_view s);
  Hasher& add(const char* s) { return add(std::string_view(s)); }  // not an AttrValue
  Hasher& add(const AttrValue& v);
  Hasher& add(const Attrs& a);
  Hasher& add(const TensorType& t);
  uint64_t digest() const;

 private:
  std::vector<unsigned char> buf_;
};

uint64_t hash_bytes(const void* data, size_t n);

// splitmix64's finalizer: a fast, portable mix of 64 bits (a bijection).
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// One step of the splitmix64 generator: advances `state`, returns the next number (the same
// sequence on every platform, unlike the standard library's distributions).
inline uint64_t splitmix64(uint64_t& state) {
  return mix64(state += 0x9E3779B97F4A7C15ull);
}

// One node's canonical hash from the hashes `h` of its producers (indexed by node id).
uint64_t node_hash(const Graph& g, NodeId id, const std::vector<uint64_t>& h);
// node_hashes()[id] for every alive node (0 for holes).
std::vector<uint64_t> node_hashes(const Graph& g);
uint64_t structural_hash(const Graph& g);

}  // namespace graphsub
