#include "gen/enumerate/partitions.h"

#include <algorithm>
#include <array>

#include "gen/space/space.h"

namespace graphsub::gen {

namespace {

// Restricted growth strings: each label is at most one more than the largest so far.
void grow(std::vector<uint8_t>& cur, size_t n, uint8_t max_label,
          std::vector<std::vector<uint8_t>>& out) {
  if (cur.size() == n) {
    if (max_label >= 1) out.push_back(cur);  // at least two blocks
    return;
  }
  for (int l = 0; l <= max_label + 1; ++l) {
    cur.push_back(static_cast<uint8_t>(l));
    grow(cur, n, std::max<uint8_t>(max_label, static_cast<uint8_t>(l)), out);
    cur.pop_back();
  }
}

std::vector<std::vector<uint8_t>> build(size_t n) {
  std::vector<std::vector<uint8_t>> out;
  if (n < 2) return out;
  std::vector<uint8_t> cur{0};  // element 0 is in block 0
  grow(cur, n, 0, out);
  return out;
}

}  // namespace

const std::vector<std::vector<uint8_t>>& output_partitions(size_t n) {
  static const auto table = [] {
    std::array<std::vector<std::vector<uint8_t>>, 2 * kMaxOps + 1> t;
    for (size_t i = 0; i < t.size(); ++i) t[i] = build(i);
    return t;
  }();
  static const std::vector<std::vector<uint8_t>> empty;
  return n < table.size() ? table[n] : empty;
}

}  // namespace graphsub::gen
