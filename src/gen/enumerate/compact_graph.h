#pragma once
// The enumerator's graph: at most kMaxOps operators, each a variant id and the tensor ids it
// reads. Tensor id p < P names pool tensor p; P + 2k + o names output o of operator k. The
// outputs of a graph are the operator outputs nobody reads. A "bare" graph has no operator and
// one output, pool tensor `bare`: it stands for the variable itself (the right side of
// transpose(transpose(x)) = x).
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "gen/space/space.h"

namespace graphsub::gen {

using TensorId = uint8_t;
constexpr TensorId kNoTensor = 0xFF;
// The inputs of an operator that reads none (a constant); unused slots stay kNoTensor.
constexpr std::array<TensorId, kMaxArity> kNoInputs = [] {
  std::array<TensorId, kMaxArity> a{};
  a.fill(kNoTensor);
  return a;
}();

struct GraphOp {
  uint16_t variant = 0;
  std::array<TensorId, kMaxArity> in = kNoInputs;
  friend bool operator==(const GraphOp&, const GraphOp&) = default;
  friend auto operator<=>(const GraphOp&, const GraphOp&) = default;
};

struct CompactGraph {
  uint8_t num_ops = 0;
  TensorId bare = kNoTensor;
  bool terminal = false;  // every output equals a pool tensor
  std::array<GraphOp, kMaxOps> ops{};
  friend bool operator==(const CompactGraph&, const CompactGraph&) = default;
  friend auto operator<=>(const CompactGraph&, const CompactGraph&) = default;
};

// Fingerprint and graph: what the enumerator emits, 40 bytes.
struct GraphRecord {
  uint64_t fp = 0;
  CompactGraph g;
};

// Graphs of exactly `num_ops` operators in 64 bits (or 128 at N = 5), for storing the largest
// graphs (most of the enumeration) at 16 bytes a record (24 wide). Fields are packed most
// significant first in the order CompactGraph compares them (variant, then inputs, operator by
// operator; no input is the largest code), so packed codes compare like the graphs they
// encode. Each operator keeps as many input fields as the space's widest variant reads (the
// slots past it are always empty), so a space of binary operators packs as it did before
// ternary ones existed. The terminal flag is not kept: the caller keeps terminal graphs apart.
class GraphPacker {
 public:
  using Wide = unsigned __int128;
  GraphPacker(const Space& s, int num_ops);
  // False when the space has too many variants or tensors for 64 bits; pack() then throws.
  bool fits() const { return bits_ <= 64; }
  // The same for 128 bits and pack_wide().
  bool fits_wide() const { return bits_ <= 128; }
  uint64_t pack(const CompactGraph& g) const;
  CompactGraph unpack(uint64_t code) const { return unpack_wide(code); }
  Wide pack_wide(const CompactGraph& g) const;
  CompactGraph unpack_wide(Wide code) const;

 private:
  int num_ops_;
  int arity_;  // input fields per operator
  int variant_bits_, tensor_bits_;
  int bits_;  // of a whole graph; past 128 when num_ops is out of range
};

// A packed graph and its fingerprint, in (fingerprint, graph) order.
struct PackedGraph {
  uint64_t fp = 0, code = 0;
  friend auto operator<=>(const PackedGraph&, const PackedGraph&) = default;
  static PackedGraph of(const GraphPacker& p, uint64_t fp, const CompactGraph& g) {
    return {fp, p.pack(g)};
  }
  CompactGraph graph(const GraphPacker& p) const { return p.unpack(code); }
};
// The same with 128-bit codes (the graphs of 5 operators).
struct WidePackedGraph {
  uint64_t fp = 0, high = 0, low = 0;
  friend auto operator<=>(const WidePackedGraph&, const WidePackedGraph&) = default;
  static WidePackedGraph of(const GraphPacker& p, uint64_t fp, const CompactGraph& g) {
    GraphPacker::Wide c = p.pack_wide(g);
    return {fp, static_cast<uint64_t>(c >> 64), static_cast<uint64_t>(c)};
  }
  CompactGraph graph(const GraphPacker& p) const {
    return p.unpack_wide(GraphPacker::Wide{high} << 64 | low);
  }
};

inline TensorId op_output_id(size_t num_pool, int op, int out) {
  return static_cast<TensorId>(num_pool + 2 * static_cast<size_t>(op) + static_cast<size_t>(out));
}
inline bool is_pool_id(size_t num_pool, TensorId t) {
  return t < num_pool;
}
inline int producer_of(size_t num_pool, TensorId t) {
  return t < num_pool ? -1 : static_cast<int>((t - num_pool) / 2);
}
inline int output_index_of(size_t num_pool, TensorId t) {
  return static_cast<int>((t - num_pool) % 2);
}

// The graph's outputs in id order: unread operator outputs, or the bare tensor.
std::vector<TensorId> graph_outputs(const Space& s, const CompactGraph& g);

// Order-independent combination of output hashes: sorted, then hashed.
uint64_t combine_output_hashes(std::span<const uint64_t> hashes);

// Hash of a tensor value: its type hash and its elements.
uint64_t value_hash(uint64_t type_hash, const uint32_t* data, int64_t n);

// "matmul none (x1, w1); relu (t0)" for messages and tests.
std::string graph_str(const Space& s, const CompactGraph& g);

}  // namespace graphsub::gen
