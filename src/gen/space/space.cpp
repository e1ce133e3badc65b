#include "gen/space/space.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "core/error.h"
#include "gen/space/evaluator.h"

namespace graphsub::gen {

namespace {

// A binary variant is commutative when swapping two pool operands of one type never changes
// its result (exact wrap-around arithmetic: ewadd and ewmul are, matmul and concat are not).
// The enumerator then reads each unordered pair once.
bool test_commutative(uint32_t v, Evaluator& ev, const Space& s, const std::vector<TypeId>& types) {
  const GenOp& op = s.variants[v];
  if (op.arity != 2) return false;
  bool tested = false;
  for (size_t a = 0; a < s.num_pool(); ++a)
    for (size_t b = 0; b < s.num_pool(); ++b) {
      if (a == b || types[a] != types[b]) continue;
      TypeId in[2] = {types[a], types[b]};
      const Applied& ap = ev.apply(v, in);
      if (!ap.ok) continue;
      std::vector<std::vector<uint32_t>> r(2);
      for (int order = 0; order < 2; ++order) {
        std::vector<uint32_t> out(static_cast<size_t>(ev.types().numel(ap.out[0])));
        std::vector<uint32_t> out2;
        if (ap.num_out > 1) out2.resize(static_cast<size_t>(ev.types().numel(ap.out[1])));
        const uint32_t* ins[2] = {s.pool_u32[order ? b : a].data(),
                                  s.pool_u32[order ? a : b].data()};
        uint32_t* outs[2] = {out.data(), out2.data()};
        ev.run<uint32_t>(v, ap, ins,
                         std::span<uint32_t* const>(outs, static_cast<size_t>(ap.num_out)));
        r[order] = out;
      }
      if (r[0] != r[1]) return false;
      tested = true;
    }
  return tested;
}

// Outputs of variant v on pool tensors `in` (empty when it does not apply).
std::vector<std::vector<uint32_t>> run_on_pool(uint32_t v, Evaluator& ev, const Space& s,
                                               const std::vector<TypeId>& types,
                                               const std::vector<size_t>& in) {
  std::vector<TypeId> t;
  std::vector<const uint32_t*> ptr;
  for (size_t i : in) {
    t.push_back(types[i]);
    ptr.push_back(s.pool_u32[i].data());
  }
  const Applied& ap = ev.apply(v, t);
  if (!ap.ok) return {};
  std::vector<std::vector<uint32_t>> out(static_cast<size_t>(ap.num_out));
  std::vector<uint32_t*> op;
  for (int o = 0; o < ap.num_out; ++o) {
    out[static_cast<size_t>(o)].resize(static_cast<size_t>(ev.types().numel(ap.out[o])));
    op.push_back(out[static_cast<size_t>(o)].data());
  }
  ev.run<uint32_t>(v, ap, ptr, op);
  return out;
}

// Variant v computes what the lower variant u computes, on every pool input either accepts.
bool test_alias(uint32_t v, uint32_t u, Evaluator& ev, const Space& s,
                const std::vector<TypeId>& types, Alias& found) {
  const GenOp& a = s.variants[v];
  const GenOp& b = s.variants[u];
  if (a.arity != b.arity || a.arity == 0 || a.num_outputs != b.num_outputs) return false;
  size_t n = s.num_pool();
  bool seen = false;
  auto check = [&](const std::vector<size_t>& in) {
    auto x = run_on_pool(v, ev, s, types, in);
    auto y = run_on_pool(u, ev, s, types, in);
    if (x != y) return false;
    if (!x.empty() && !seen) {
      seen = true;
      for (size_t i = 0; i < in.size(); ++i) found.example[i] = static_cast<uint8_t>(in[i]);
    }
    return true;
  };
  // Every choice of distinct pool tensors, one per input.
  std::vector<size_t> in;
  std::function<bool()> each = [&]() -> bool {
    if (static_cast<int>(in.size()) == a.arity) return check(in);
    for (size_t i = 0; i < n; ++i) {
      if (std::find(in.begin(), in.end(), i) != in.end()) continue;
      in.push_back(i);
      bool same = each();
      in.pop_back();
      if (!same) return false;
    }
    return true;
  };
  if (!each()) return false;
  found.variant = v;
  found.same_as = u;
  return seen;
}

}  // namespace

Space make_space(std::vector<GenOp> variants, std::vector<PoolTensor> pool, int max_ops,
                 uint64_t seed) {
  if (max_ops < 1 || max_ops > kMaxOps)
    throw Error(fmt::format("--max-ops must be between 1 and {}, got {}", kMaxOps, max_ops));
  if (pool.empty() || pool.size() > kMaxPool)
    throw Error(fmt::format("the pool must hold 1 to {} tensors, got {}", kMaxPool, pool.size()));
  if (variants.empty()) throw Error("the generator operator set is empty");
  Space s;
  s.variants = std::move(variants);
  s.pool = std::move(pool);
  s.max_ops = max_ops;
  s.seed = seed;
  for (size_t i = 0; i < s.pool.size(); ++i) {
    TensorType t;
    t.shape = s.pool[i].shape;
    if (s.pool[i].role == Role::Scalar && !t.shape.empty())
      throw Error(fmt::format("pool scalar '{}' must have no dimensions", s.pool[i].name));
    s.pool_types.push_back(t);
    s.pool_u32.push_back(pool_values_u32(seed, i, t.numel()));
    s.pool_f32.push_back(pool_values_f32(seed, i, t.numel()));
    TensorType a;
    a.shape = s.pool[i].retest_shape.empty() ? alt_shape(t.shape, s.pool[i].role)
                                             : s.pool[i].retest_shape;
    s.alt_types.push_back(a);
    s.alt_u32.push_back(pool_values_u32(seed + 0x51ED, i, a.numel()));
    s.alt_f32.push_back(pool_values_f32(seed + 0x51ED, i, a.numel()));
  }
  Evaluator ev(s.variants);
  std::vector<TypeId> types;
  for (auto& t : s.pool_types) types.push_back(ev.types().intern(t));
  for (uint32_t v = 0; v < s.variants.size(); ++v)
    s.variants[v].commutative = test_commutative(v, ev, s, types);
  for (uint32_t v = 0; v < s.variants.size(); ++v)
    for (uint32_t u = 0; u < v; ++u) {
      Alias al;
      if (s.variants[u].alias_of < 0 && test_alias(v, u, ev, s, types, al)) {
        s.variants[v].alias_of = static_cast<int>(u);
        s.aliases.push_back(al);
        break;
      }
    }
  return s;
}

int Space::max_arity() const {
  int a = 1;
  for (const GenOp& v : variants) a = std::max(a, v.arity);
  return a;
}

}  // namespace graphsub::gen
