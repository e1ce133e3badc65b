#pragma once
// Memo of output hashes for the last operator of a graph. The last operator's values are only
// hashed, never read, and the same operator is often applied to the same values in many
// branches of the search (conv of the first operator's output, with each of the siblings
// placed between): this direct-mapped table answers those repeats without running the kernel.
// Lookups compare the whole key, so a hit always gives the exact hashes the kernel would.
#include <array>
#include <cstdint>
#include <vector>

#include "gen/space/gen_op.h"

namespace graphsub::gen {

class LeafMemo {
 public:
  // The table (12 MiB by default) is allocated at the first store: planners and rounds that
  // never reach a last operator do not pay for it.
  explicit LeafMemo(size_t log2_entries = 18) : entries_(size_t{1} << log2_entries) {}

  // Input hashes of one application (0 past its arity).
  using InputHashes = std::array<uint64_t, kMaxArity>;

  // True and the output hashes when (variant, input hashes) is known.
  bool find(uint32_t v, const InputHashes& in, std::array<uint64_t, kMaxOutputs>& out) const {
    if (table_.empty()) return false;
    const Entry& e = table_[slot(v, in)];
    if (!e.used || e.v != v || e.in != in) return false;
    out = e.out;
    return true;
  }
  void store(uint32_t v, const InputHashes& in, const std::array<uint64_t, kMaxOutputs>& out) {
    if (table_.empty()) table_.resize(entries_);
    table_[slot(v, in)] = Entry{in, out, v, true};
  }

 private:
  struct Entry {
    InputHashes in{};
    std::array<uint64_t, kMaxOutputs> out{};
    uint32_t v = 0;
    bool used = false;
  };
  size_t slot(uint32_t v, const InputHashes& in) const {
    uint64_t k = in[0] * 0x9E3779B97F4A7C15ull ^
                 (in[1] + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full ^
                 (in[2] + 0x165667B19E3779F9ull) * 0x27D4EB2F165667C5ull ^
                 (in[3] + 0x27D4EB2F165667C5ull) * 0x165667B19E3779F9ull ^ v;
    k ^= k >> 29;
    return static_cast<size_t>(k) & (entries_ - 1);
  }
  size_t entries_;
  std::vector<Entry> table_;
};

}  // namespace graphsub::gen
