#include "gen/compact_graph.h"

#include <xxhash.h>

#include <algorithm>

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
