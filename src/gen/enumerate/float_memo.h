#pragma once
// Float values of subterms, for the float-only evaluations of the numerical re-test: the graphs
// of a bucket, and of the buckets after it, share most of their subterms (conv of an image by
// a kernel occurs in thousands of them), so each is computed once while it stays in the memo.
//
// Terms are interned exactly: a term is (variant, output index, its inputs' term ids), pool
// tensors are terms 0..p-1. No hash stands in for a term, so a hit is always the value the
// kernel would compute. The memo starts over when it holds too many terms or floats.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "gen/space/evaluator.h"
#include "gen/space/flat_map.h"

namespace graphsub::gen {

class FloatMemo {
 public:
  static constexpr uint32_t kNoTerm = (1u << 23) - 1;

  // About 64 MiB of values per evaluator at most by default, and ids that fit 23 bits.
  static constexpr size_t kDefaultTerms = size_t{1} << 20;
  static constexpr size_t kDefaultFloats = size_t{16} << 20;

  explicit FloatMemo(uint32_t num_pool, size_t max_terms = kDefaultTerms,
                     size_t max_floats = kDefaultFloats)
      : num_pool_(num_pool),
        max_terms_(std::min(max_terms, kDefaultTerms)),
        max_floats_(max_floats) {}

  struct Entry {
    TypeId type = 0;
    std::vector<float> values;
  };
  // The term id of (variant, output, inputs), or kNoTerm when it is not memoized. Inputs
  // absent (unary, constant) are kNoTerm.
  uint32_t find(uint32_t variant, int output, uint32_t in0, uint32_t in1) const {
    const uint32_t* id = ids_.find(key(variant, output, in0, in1));
    return id ? *id : kNoTerm;
  }
  // The value of a memoized operator term (id >= the pool size). Stable until reset().
  const Entry& entry(uint32_t id) const { return entries_[id - num_pool_]; }
  // Memoizes a term that find() did not know; its id, or kNoTerm when the memo is full (the
  // caller resets it before the next graph). An operator's outputs are added together, so
  // while the memo has room none of them is known when one is missing.
  uint32_t add(uint32_t variant, int output, uint32_t in0, uint32_t in1, TypeId type,
               const std::vector<float>& values) {
    if (full()) return kNoTerm;
    auto id = static_cast<uint32_t>(num_pool_ + entries_.size());
    ids_.insert(key(variant, output, in0, in1), id);
    entries_.push_back(Entry{type, values});
    floats_ += values.size();
    return id;
  }
  bool full() const { return entries_.size() >= max_terms_ || floats_ >= max_floats_; }
  size_t size() const { return entries_.size(); }
  void reset() {
    ids_ = FlatMap64();
    entries_.clear();
    floats_ = 0;
  }

 private:
  static uint64_t key(uint32_t variant, int output, uint32_t in0, uint32_t in1) {
    // 16 bits of variant, 1 of output, 23 of each input; +1 keeps it non-zero.
    return ((uint64_t{variant} << 47 | uint64_t(output & 1) << 46 | uint64_t{in0} << 23 | in1) + 1);
  }
  uint32_t num_pool_;
  size_t max_terms_, max_floats_;
  FlatMap64 ids_;
  std::deque<Entry> entries_;  // stable addresses while the memo grows
  size_t floats_ = 0;
};

}  // namespace graphsub::gen
