#pragma once
// A small open-addressing hash map from non-zero 64-bit keys to small values, for the hot
// lookups of the enumerator (std::unordered_map costs a pointer chase per lookup there). Keys
// and values share a slot, so a lookup in a table larger than the caches misses once. Tables
// are filled up to 4/5 before they double, and slots are packed: at N = 4 the enumerator's two
// largest (pieces and representatives, held on every rank) take 176 MiB, against 448 MiB
// with aligned slots filled to half.
#include <cstdint>
#include <vector>

namespace graphsub::gen {

template <class V>
class FlatMap {
 public:
  FlatMap() { rehash(64); }

  // Pointer to the value of `key`, or null.
  const V* find(uint64_t key) const {
    size_t mask = slots_.size() - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }
  // Starts loading the slot of `key` into the caches (a find() soon after does not wait).
  void prefetch(uint64_t key) const { __builtin_prefetch(&slots_[mix(key) & (slots_.size() - 1)]); }
  V* find(uint64_t key) { return const_cast<V*>(static_cast<const FlatMap&>(*this).find(key)); }
  // Inserts `key` (which must not be present yet).
  void insert(uint64_t key, V value) {
    if (5 * (size_ + 1) > 4 * slots_.size()) rehash(slots_.size() * 2);
    place(key, value);
    ++size_;
  }
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }
  // Visits every (key, value) in table order.
  template <class F>
  void for_each(F&& f) const {
    for (const Slot& sl : slots_)
      if (sl.key != 0) f(sl.key, sl.value);
  }

 private:
  static size_t mix(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return static_cast<size_t>(k);
  }
  void place(uint64_t key, V value) {
    size_t mask = slots_.size() - 1;
    size_t i = mix(key) & mask;
    while (slots_[i].key != 0 && slots_[i].key != key) i = (i + 1) & mask;
    slots_[i] = Slot{key, value};
  }
  void rehash(size_t cap) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(cap, Slot{});
    for (const Slot& sl : old)
      if (sl.key != 0) place(sl.key, sl.value);
  }
  // Packed to 4 bytes: a slot of a 32-bit value takes 12 bytes, not 16 (x86 reads the
  // unaligned keys at no cost that matters next to the cache miss).
#pragma pack(push, 4)
  struct Slot {
    uint64_t key = 0;  // 0: empty
    V value{};
  };
#pragma pack(pop)
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

using FlatMap64 = FlatMap<uint32_t>;

}  // namespace graphsub::gen
