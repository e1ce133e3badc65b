#pragma once
// A small open-addressing hash map from non-zero 64-bit keys to small values, for the hot
// lookups of the enumerator (std::unordered_map costs a pointer chase per lookup there).
#include <cstdint>
#include <vector>

namespace graphsub::gen {

template <class V>
class FlatMap {
 public:
  FlatMap() { rehash(64); }

  // Pointer to the value of `key`, or null.
  const V* find(uint64_t key) const {
    size_t mask = keys_.size() - 1;
    for (size_t i = mix(key) & mask;; i = (i + 1) & mask) {
      if (keys_[i] == key) return &vals_[i];
      if (keys_[i] == 0) return nullptr;
    }
  }
  V* find(uint64_t key) { return const_cast<V*>(static_cast<const FlatMap&>(*this).find(key)); }
  // Inserts `key` (which must not be present yet).
  void insert(uint64_t key, V value) {
    if (2 * (size_ + 1) > keys_.size()) rehash(keys_.size() * 2);
    place(key, value);
    ++size_;
  }
  size_t size() const { return size_; }
  // Visits every (key, value) in table order.
  template <class F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] != 0) f(keys_[i], vals_[i]);
  }

 private:
  static size_t mix(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return static_cast<size_t>(k);
  }
  void place(uint64_t key, V value) {
    size_t mask = keys_.size() - 1;
    size_t i = mix(key) & mask;
    while (keys_[i] != 0 && keys_[i] != key) i = (i + 1) & mask;
    keys_[i] = key;
    vals_[i] = value;
  }
  void rehash(size_t cap) {
    std::vector<uint64_t> ok = std::move(keys_);
    std::vector<V> ov = std::move(vals_);
    keys_.assign(cap, 0);
    vals_.assign(cap, V{});
    for (size_t i = 0; i < ok.size(); ++i)
      if (ok[i] != 0) place(ok[i], ov[i]);
  }
  std::vector<uint64_t> keys_;
  std::vector<V> vals_;
  size_t size_ = 0;
};

using FlatMap64 = FlatMap<uint32_t>;

}  // namespace graphsub::gen
