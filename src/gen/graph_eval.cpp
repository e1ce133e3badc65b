#include "gen/graph_eval.h"

namespace graphsub::gen {

GraphEvaluator::GraphEvaluator(const Space& s, bool alt) : s_(s), alt_(alt), ev_(s.variants, alt) {
  for (size_t p = 0; p < s.num_pool(); ++p) {
    pool_types_.push_back(ev_.types().intern(alt ? s.alt_types[p] : s.pool_types[p]));
    const auto& u = alt ? s.alt_u32[p] : s.pool_u32[p];
    pool_hashes_.push_back(
        value_hash(ev_.types().hash(pool_types_[p]), u.data(), static_cast<int64_t>(u.size())));
  }
}

EvaluatedGraph GraphEvaluator::evaluate(const CompactGraph& g, bool with_float, bool exact) {
  const size_t p = s_.num_pool();
  const size_t n = p + 2 * kMaxOps;
  std::vector<TypeId> types(n, 0);
  std::vector<std::vector<uint32_t>> u(n);
  std::vector<std::vector<float>> f(n);
  std::vector<uint64_t> hashes(n, 0);
  std::vector<const uint32_t*> u_ptr(n, nullptr);
  std::vector<const float*> f_ptr(n, nullptr);
  for (size_t i = 0; i < p; ++i) {
    types[i] = pool_types_[i];
    hashes[i] = exact ? pool_hashes_[i] : 0;
    u_ptr[i] = (alt_ ? s_.alt_u32[i] : s_.pool_u32[i]).data();
    f_ptr[i] = (alt_ ? s_.alt_f32[i] : s_.pool_f32[i]).data();
  }
  EvaluatedGraph r;
  for (int k = 0; k < g.num_ops; ++k) {
    const GraphOp& gop = g.ops[k];
    const GenOp& op = s_.variants[gop.variant];
    TypeId in_t[kMaxArity];
    const uint32_t* in_u[kMaxArity];
    const float* in_f[kMaxArity];
    for (int i = 0; i < op.arity; ++i) {
      TensorId t = gop.in[i];
      if (t >= n || (t >= p && producer_of(p, t) >= k)) return r;  // malformed
      in_t[i] = types[t];
      in_u[i] = u_ptr[t];
      in_f[i] = f_ptr[t];
    }
    const Applied& ap =
        ev_.apply(gop.variant, std::span<const TypeId>(in_t, static_cast<size_t>(op.arity)));
    if (!ap.ok) return r;
    uint32_t* out_u[kMaxOutputs];
    float* out_f[kMaxOutputs];
    for (int o = 0; o < ap.num_out; ++o) {
      TensorId t = op_output_id(p, k, o);
      types[t] = ap.out[o];
      auto numel = static_cast<size_t>(ev_.types().numel(ap.out[o]));
      if (exact) {
        u[t].assign(numel, 0);
        out_u[o] = u[t].data();
        u_ptr[t] = u[t].data();
      }
      if (with_float) {
        f[t].assign(numel, 0.0f);
        out_f[o] = f[t].data();
        f_ptr[t] = f[t].data();
      }
    }
    auto ar = static_cast<size_t>(op.arity);
    auto no = static_cast<size_t>(ap.num_out);
    if (exact)
      ev_.run<uint32_t>(gop.variant, ap, std::span<const uint32_t* const>(in_u, ar),
                        std::span<uint32_t* const>(out_u, no));
    if (with_float)
      ev_.run<float>(gop.variant, ap, std::span<const float* const>(in_f, ar),
                     std::span<float* const>(out_f, no));
    for (int o = 0; o < ap.num_out; ++o) {
      TensorId t = op_output_id(p, k, o);
      if (exact)
        hashes[t] =
            value_hash(ev_.types().hash(types[t]), u[t].data(), ev_.types().numel(types[t]));
      r.all_hashes.push_back(hashes[t]);
    }
  }
  r.outputs = graph_outputs(s_, g);
  for (TensorId t : r.outputs) {
    r.output_hashes.push_back(hashes[t]);
    if (with_float) {
      if (t < p)
        r.output_f32.push_back(alt_ ? s_.alt_f32[t] : s_.pool_f32[t]);
      else
        r.output_f32.push_back(f[t]);
    }
  }
  r.ok = true;
  return r;
}

}  // namespace graphsub::gen
