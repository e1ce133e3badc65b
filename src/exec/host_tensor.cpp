#include "exec/host_tensor.h"

#include <algorithm>
#include <cmath>

#include "ir/builder.h"
#include "ir/hash.h"

namespace graphsub {

static uint64_t name_seed(uint64_t seed, const std::string& name) {
  return seed * 0x9E3779B97F4A7C15ull ^ hash_bytes(name.data(), name.size());
}

TensorMap<float> random_feeds(const Graph& g, uint64_t seed, bool include_weights) {
  TensorMap<float> m;
  for (NodeId id = 0; id < g.num_slots(); ++id) {
    if (!g.alive(id)) continue;
    const Node& n = g.node(id);
    if (!(n.is_input() || (include_weights && n.is_weight()))) continue;
    m[n.name] = {n.outputs[0].shape, random_values(n.outputs[0].numel(), name_seed(seed, n.name))};
  }
  return m;
}

TensorMap<uint32_t> random_feeds_u32(const Graph& g, uint64_t seed, bool include_weights) {
  TensorMap<uint32_t> m;
  for (NodeId id = 0; id < g.num_slots(); ++id) {
    if (!g.alive(id)) continue;
    const Node& n = g.node(id);
    if (!(n.is_input() || (include_weights && n.is_weight()))) continue;
    HostTensor<uint32_t> t{n.outputs[0].shape, {}};
    uint64_t s = name_seed(seed, n.name);
    t.data.resize(static_cast<size_t>(n.outputs[0].numel()));
    for (auto& v : t.data) {
      s += 0x9E3779B97F4A7C15ull;
      uint64_t z = (s ^ (s >> 31)) * 0xBF58476D1CE4E5B9ull;
      v = static_cast<uint32_t>(z >> 32);
    }
    m[n.name] = std::move(t);
  }
  return m;
}

Difference compare(const HostTensor<float>& got, const HostTensor<float>& ref, Tolerance tol) {
  Difference d;
  if (got.shape != ref.shape || got.data.size() != ref.data.size()) {
    d.ok = false;
    d.max_abs = d.max_rel = INFINITY;
    return d;
  }
  for (float v : ref.data)
    if (std::isfinite(v)) d.max_ref = std::max(d.max_ref, static_cast<double>(std::fabs(v)));
  double abs_tol = tol.atol * std::max(1.0, d.max_ref);
  for (size_t i = 0; i < ref.data.size(); ++i) {
    double x = got.data[i], y = ref.data[i];
    if (!std::isfinite(y)) ++d.nonfinite;
    if (!std::isfinite(x) || !std::isfinite(y)) {
      if (!((std::isnan(x) && std::isnan(y)) || x == y)) {
        d.ok = false;
        d.max_abs = d.max_rel = INFINITY;
      }
      continue;
    }
    double diff = std::fabs(x - y);
    double mag = std::max(std::fabs(x), std::fabs(y));
    d.max_abs = std::max(d.max_abs, diff);
    if (mag > 0) d.max_rel = std::max(d.max_rel, diff / mag);
    if (!(diff <= abs_tol + tol.rtol * std::fabs(y))) d.ok = false;
  }
  return d;
}

Tolerance tolerance_for(StoredPrecision p, Tolerance t) {
  if (p == StoredPrecision::Float16) return {std::max(t.rtol, 1e-2), std::max(t.atol, 1e-3)};
  if (p == StoredPrecision::BFloat16) return {std::max(t.rtol, 5e-2), std::max(t.atol, 1e-2)};
  return t;
}

}  // namespace graphsub
