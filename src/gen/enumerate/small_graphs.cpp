#include "gen/enumerate/small_graphs.h"

#include <algorithm>

#include "core/error.h"

namespace graphsub::gen {

namespace {

// [begin, end) of the entries of sorted `v` whose fingerprint lies in [lo, hi].
template <class T>
std::pair<size_t, size_t> fp_range(const std::vector<T>& v, uint64_t lo, uint64_t hi) {
  auto first =
      std::lower_bound(v.begin(), v.end(), lo, [](const T& r, uint64_t f) { return r.fp < f; });
  auto last = std::upper_bound(first, v.end(), hi, [](uint64_t f, const T& r) { return f < r.fp; });
  return {static_cast<size_t>(first - v.begin()), static_cast<size_t>(last - v.begin())};
}

}  // namespace

SmallGraphs::SmallGraphs(const Space& s) {
  for (int k = 1; k < s.max_ops; ++k) packers_.emplace_back(s, k);
  levels_.resize(packers_.size());
  blocks_.resize(packers_.size());
}

void SmallGraphs::add(const GraphRecord& r) {
  int k = r.g.num_ops;
  if (k >= 1 && static_cast<size_t>(k) <= packers_.size() && !r.g.terminal &&
      packers_[static_cast<size_t>(k - 1)].fits()) {
    auto& blocks = blocks_[static_cast<size_t>(k - 1)];
    if (blocks.empty() || blocks.back().size() == kBlock) {
      blocks.emplace_back();
      blocks.back().reserve(kBlock);
    }
    blocks.back().push_back(PackedGraph{r.fp, packers_[static_cast<size_t>(k - 1)].pack(r.g)});
    return;
  }
  whole_.push_back(r);
}

void SmallGraphs::absorb(SmallGraphs&& other) {
  if (packers_.empty()) {
    *this = std::move(other);
    other = SmallGraphs{};
    return;
  }
  for (size_t k = 0; k < levels_.size() && k < other.levels_.size(); ++k) {
    for (auto& b : other.blocks_[k]) blocks_[k].push_back(std::move(b));
    if (!other.levels_[k].empty()) blocks_[k].push_back(std::move(other.levels_[k]));
  }
  whole_.insert(whole_.end(), other.whole_.begin(), other.whole_.end());
  other = SmallGraphs{};
}

void SmallGraphs::sort() {
  for (size_t k = 0; k < levels_.size(); ++k) {
    // One array of exactly the graphs' size; each block freed once copied.
    size_t n = levels_[k].size();
    for (const auto& b : blocks_[k]) n += b.size();
    levels_[k].reserve(n);
    for (auto& b : blocks_[k]) {
      levels_[k].insert(levels_[k].end(), b.begin(), b.end());
      std::vector<PackedGraph>().swap(b);
    }
    blocks_[k].clear();
    std::sort(levels_[k].begin(), levels_[k].end());
  }
  std::sort(whole_.begin(), whole_.end(), record_less);
}

size_t SmallGraphs::size() const {
  size_t n = whole_.size();
  for (const auto& level : levels_) n += level.size();
  for (const auto& blocks : blocks_)
    for (const auto& b : blocks) n += b.size();
  return n;
}

const std::vector<PackedGraph>& SmallGraphs::packed(int ops) const {
  if (ops < 1 || static_cast<size_t>(ops) > levels_.size())
    throw Error("small graphs: no graphs of " + std::to_string(ops) + " operators kept");
  return levels_[static_cast<size_t>(ops - 1)];
}

const GraphPacker& SmallGraphs::packer(int ops) const {
  packed(ops);  // checks the range
  return packers_[static_cast<size_t>(ops - 1)];
}

std::vector<GraphRecord> SmallGraphs::between(uint64_t lo, uint64_t hi) const {
  std::vector<GraphRecord> out;
  for (size_t k = 0; k < levels_.size(); ++k) {
    auto [b, e] = fp_range(levels_[k], lo, hi);
    for (size_t i = b; i < e; ++i)
      out.push_back(GraphRecord{levels_[k][i].fp, packers_[k].unpack(levels_[k][i].code)});
  }
  auto [b, e] = fp_range(whole_, lo, hi);
  out.insert(out.end(), whole_.begin() + static_cast<std::ptrdiff_t>(b),
             whole_.begin() + static_cast<std::ptrdiff_t>(e));
  std::sort(out.begin(), out.end(), record_less);
  return out;
}

std::optional<CompactGraph> SmallGraphs::smallest_with(uint64_t fp) const {
  // Graphs compare by operator count first, so the smallest is the least of the first match
  // of each array.
  std::optional<CompactGraph> best;
  auto consider = [&](const CompactGraph& g) {
    if (!best || g < *best) best = g;
  };
  for (size_t k = 0; k < levels_.size(); ++k) {
    auto [b, e] = fp_range(levels_[k], fp, fp);
    if (b < e) consider(packers_[k].unpack(levels_[k][b].code));
  }
  auto [b, e] = fp_range(whole_, fp, fp);
  if (b < e) consider(whole_[b].g);
  return best;
}

}  // namespace graphsub::gen
