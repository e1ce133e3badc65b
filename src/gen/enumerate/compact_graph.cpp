#include "gen/enumerate/compact_graph.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>

#include "core/error.h"

namespace graphsub::gen {

std::vector<TensorId> graph_outputs(const Space& s, const CompactGraph& g) {
  if (g.num_ops == 0)
    return g.bare == kNoTensor ? std::vector<TensorId>{} : std::vector<TensorId>{g.bare};
  size_t p = s.num_pool();
  std::vector<TensorId> outs;
  for (int k = 0; k < g.num_ops; ++k) {
    int n = s.variants[g.ops[k].variant].num_outputs;
    for (int o = 0; o < n; ++o) {
      TensorId t = op_output_id(p, k, o);
      bool read = false;
      for (int j = k + 1; j < g.num_ops && !read; ++j)
        for (TensorId in : g.ops[j].in) read = read || in == t;
      if (!read) outs.push_back(t);
    }
  }
  return outs;
}

GraphPacker::GraphPacker(const Space& s, int num_ops) : num_ops_(num_ops), arity_(s.max_arity()) {
  variant_bits_ = std::bit_width(std::max<size_t>(s.variants.size(), 2) - 1);
  // Tensor ids 0 .. num_pool + 2 * num_ops - 1, and one more code for "no tensor".
  tensor_bits_ = std::bit_width(s.num_pool() + 2 * static_cast<size_t>(num_ops));
  bits_ =
      num_ops >= 1 && num_ops <= kMaxOps ? num_ops * (variant_bits_ + arity_ * tensor_bits_) : 1000;
}

uint64_t GraphPacker::pack(const CompactGraph& g) const {
  if (!fits())
    throw Error("graph packer: graphs of " + std::to_string(num_ops_) +
                " operators do not fit 64 bits");
  return static_cast<uint64_t>(pack_wide(g));
}

GraphPacker::Wide GraphPacker::pack_wide(const CompactGraph& g) const {
  if (!fits_wide() || g.num_ops != num_ops_)
    throw Error("graph packer: graph of " + std::to_string(g.num_ops) +
                " operators does not fit the packing for " + std::to_string(num_ops_));
  const Wide none = (Wide{1} << tensor_bits_) - 1;
  Wide code = 0;
  for (int k = 0; k < num_ops_; ++k) {
    code = code << variant_bits_ | g.ops[static_cast<size_t>(k)].variant;
    const auto& in = g.ops[static_cast<size_t>(k)].in;
    for (int i = 0; i < arity_; ++i) {
      TensorId t = in[static_cast<size_t>(i)];
      code = code << tensor_bits_ | (t == kNoTensor ? none : Wide{t});
    }
  }
  return code;
}

CompactGraph GraphPacker::unpack_wide(Wide code) const {
  const Wide none = (Wide{1} << tensor_bits_) - 1;
  CompactGraph g;
  g.num_ops = static_cast<uint8_t>(num_ops_);
  for (int k = num_ops_ - 1; k >= 0; --k) {
    GraphOp& op = g.ops[static_cast<size_t>(k)];
    for (int i = arity_ - 1; i >= 0; --i) {
      Wide t = code & none;
      code >>= tensor_bits_;
      op.in[static_cast<size_t>(i)] = t == none ? kNoTensor : static_cast<TensorId>(t);
    }
    op.variant = static_cast<uint16_t>(code & ((Wide{1} << variant_bits_) - 1));
    code >>= variant_bits_;
  }
  return g;
}

uint64_t combine_output_hashes(std::span<const uint64_t> hashes) {
  std::array<uint64_t, 2 * kMaxOps + 1> sorted{};
  size_t n = std::min(hashes.size(), sorted.size());
  std::copy_n(hashes.begin(), n, sorted.begin());
  std::sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n));
  return XXH3_64bits_withSeed(sorted.data(), n * sizeof(uint64_t), 0x6A09E667F3BCC909ull + n);
}

uint64_t value_hash(uint64_t type_hash, const uint32_t* data, int64_t n) {
  return XXH3_64bits_withSeed(data, static_cast<size_t>(n) * sizeof(uint32_t), type_hash);
}

std::string graph_str(const Space& s, const CompactGraph& g) {
  size_t p = s.num_pool();
  auto tensor = [&](TensorId t) -> std::string {
    if (is_pool_id(p, t)) return s.pool[t].name;
    int k = producer_of(p, t), o = output_index_of(p, t);
    return "t" + std::to_string(k) + (o ? "." + std::to_string(o) : "");
  };
  if (g.num_ops == 0) return tensor(g.bare);
  std::string out;
  for (int k = 0; k < g.num_ops; ++k) {
    const GenOp& op = s.variants[g.ops[k].variant];
    if (k) out += "; ";
    out += "t" + std::to_string(k) + " = " + op.label() + " (";
    for (int i = 0; i < op.arity; ++i) out += (i ? ", " : "") + tensor(g.ops[k].in[i]);
    out += ")";
  }
  return out;
}

}  // namespace graphsub::gen
