#pragma once
// The graphs of fewer than max_ops operators: the pieces that disconnected partners are
// assembled from, and partners of the largest graphs in every fingerprint range. Every rank
// holds them whole, so they are kept packed (GraphPacker): 16 bytes a graph, one array per
// operator count sorted by (fingerprint, code), which is (fingerprint, graph) order. Bare
// graphs, terminal graphs and graphs the packing cannot hold stay whole. At N = 4 that is
// 5.3 M graphs in 85 MB rather than 212 MB of whole records; at N = 5, where they are the
// 340 M graphs of up to 4 operators, 5.4 GB rather than 16 GB.
#include <cstdint>
#include <optional>
#include <vector>

#include "gen/enumerate/compact_graph.h"

namespace graphsub::gen {

class SmallGraphs {
 public:
  SmallGraphs() = default;
  // Holds graphs of fewer than s.max_ops operators.
  explicit SmallGraphs(const Space& s);

  // Graphs are added in blocks of fixed size (no doubling vector's slack beside them), and
  // joined into one array per operator count by sort().
  void add(const GraphRecord& r);
  // Takes every graph of `other` (which is left empty).
  void absorb(SmallGraphs&& other);
  // Joins the blocks and puts every array in order; call once every graph is added.
  void sort();

  size_t size() const;
  // The graphs with operators (packed arrays and whole ones), in no particular order.
  template <class F>
  void for_each(F&& f) const {
    for (size_t k = 0; k < levels_.size(); ++k)
      for (const PackedGraph& p : levels_[k]) f(GraphRecord{p.fp, packers_[k].unpack(p.code)});
    for (const GraphRecord& r : whole_) f(r);
  }
  // The largest operator count kept packed (max_ops - 1).
  int packed_levels() const { return static_cast<int>(levels_.size()); }
  // The graphs of `ops` operators kept packed, sorted (for lookups by fingerprint), and their
  // packing.
  const std::vector<PackedGraph>& packed(int ops) const;
  const GraphPacker& packer(int ops) const;
  // The graphs kept whole (bare, terminal, or too wide to pack), sorted.
  const std::vector<GraphRecord>& whole() const { return whole_; }
  // Every graph whose fingerprint lies in [lo, hi], unpacked, in (fingerprint, graph) order.
  std::vector<GraphRecord> between(uint64_t lo, uint64_t hi) const;
  // The smallest graph (fewest operators, then lowest encoding) with fingerprint `fp`.
  std::optional<CompactGraph> smallest_with(uint64_t fp) const;

 private:
  std::vector<GraphPacker> packers_;              // [k - 1]: graphs of k operators
  std::vector<std::vector<PackedGraph>> levels_;  // [k - 1]
  // [k - 1]: graphs added and not yet joined into levels_, in blocks of kBlock.
  std::vector<std::vector<std::vector<PackedGraph>>> blocks_;
  static constexpr size_t kBlock = size_t{1} << 20;  // 16 MiB
  std::vector<GraphRecord> whole_;
};

// (fingerprint, graph) order of records.
inline bool record_less(const GraphRecord& a, const GraphRecord& b) {
  return a.fp != b.fp ? a.fp < b.fp : a.g < b.g;
}

}  // namespace graphsub::gen
