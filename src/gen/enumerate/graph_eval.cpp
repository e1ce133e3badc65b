#include "gen/enumerate/graph_eval.h"

#include <algorithm>
#include <array>

namespace graphsub::gen {

namespace {
// False for a malformed graph: operator k reads a tensor that is neither a pool tensor nor
// an output of an earlier operator.
bool computed_before(size_t p, TensorId t, int k) {
  return t < p + 2 * kMaxOps && (t < p || producer_of(p, t) < k);
}
}  // namespace

GraphEvaluator::GraphEvaluator(const Space& s, bool alt, size_t memo_terms)
    : s_(s),
      alt_(alt),
      ev_(s.variants, alt),
      memo_(static_cast<uint32_t>(s.num_pool()), memo_terms) {
  for (size_t p = 0; p < s.num_pool(); ++p) {
    pool_types_.push_back(ev_.types().intern(alt ? s.alt_types[p] : s.pool_types[p]));
    const auto& u = alt ? s.alt_u32[p] : s.pool_u32[p];
    pool_hashes_.push_back(
        value_hash(ev_.types().hash(pool_types_[p]), u.data(), static_cast<int64_t>(u.size())));
  }
}

EvaluatedGraph GraphEvaluator::evaluate(const CompactGraph& g, bool with_float, bool exact) {
  if (!exact) return with_float ? evaluate_float(g) : EvaluatedGraph{};
  EvaluatedGraph r = evaluate_exact(g);
  if (with_float && r.ok) r.output_f32 = evaluate_float(g).output_f32;
  return r;
}

EvaluatedGraph GraphEvaluator::evaluate_exact(const CompactGraph& g) {
  const size_t p = s_.num_pool();
  const size_t n = p + 2 * kMaxOps;
  std::vector<TypeId> types(n, 0);
  std::vector<std::vector<uint32_t>> u(n);
  std::vector<uint64_t> hashes(n, 0);
  std::vector<const uint32_t*> u_ptr(n, nullptr);
  for (size_t i = 0; i < p; ++i) {
    types[i] = pool_types_[i];
    hashes[i] = pool_hashes_[i];
    u_ptr[i] = (alt_ ? s_.alt_u32[i] : s_.pool_u32[i]).data();
  }
  EvaluatedGraph r;
  for (int k = 0; k < g.num_ops; ++k) {
    const GraphOp& gop = g.ops[k];
    const GenOp& op = s_.variants[gop.variant];
    TypeId in_t[kMaxArity];
    const uint32_t* in_u[kMaxArity];
    for (int i = 0; i < op.arity; ++i) {
      TensorId t = gop.in[i];
      if (!computed_before(p, t, k)) return r;
      in_t[i] = types[t];
      in_u[i] = u_ptr[t];
    }
    const Applied& ap =
        ev_.apply(gop.variant, std::span<const TypeId>(in_t, static_cast<size_t>(op.arity)));
    if (!ap.ok) return r;
    uint32_t* out_u[kMaxOutputs];
    for (int o = 0; o < ap.num_out; ++o) {
      TensorId t = op_output_id(p, k, o);
      types[t] = ap.out[o];
      u[t].assign(static_cast<size_t>(ev_.types().numel(ap.out[o])), 0);
      out_u[o] = u[t].data();
      u_ptr[t] = u[t].data();
    }
    ev_.run<uint32_t>(gop.variant, ap,
                      std::span<const uint32_t* const>(in_u, static_cast<size_t>(op.arity)),
                      std::span<uint32_t* const>(out_u, static_cast<size_t>(ap.num_out)));
    for (int o = 0; o < ap.num_out; ++o) {
      TensorId t = op_output_id(p, k, o);
      hashes[t] = value_hash(ev_.types().hash(types[t]), u[t].data(), ev_.types().numel(types[t]));
      r.all_hashes.push_back(hashes[t]);
    }
  }
  r.outputs = graph_outputs(s_, g);
  for (TensorId t : r.outputs) r.output_hashes.push_back(hashes[t]);
  r.ok = true;
  return r;
}

EvaluatedGraph GraphEvaluator::evaluate_float(const CompactGraph& g) {
  constexpr uint32_t kNoTerm = FloatMemo::kNoTerm;
  const size_t p = s_.num_pool();
  const size_t n = p + 2 * kMaxOps;
  if (memo_.full()) memo_.reset();  // only between graphs: entries stay put during one
  types_.assign(n, 0);
  values_.assign(n, nullptr);
  terms_.assign(n, kNoTerm);
  for (size_t i = 0; i < p; ++i) {
    types_[i] = pool_types_[i];
    values_[i] = pool_f32(i).data();
    terms_[i] = static_cast<uint32_t>(i);
  }
  std::array<std::vector<float>, 2 * kMaxOps> own;  // values the memo did not take
  EvaluatedGraph r;
  for (int k = 0; k < g.num_ops; ++k) {
    const GraphOp& gop = g.ops[k];
    const GenOp& op = s_.variants[gop.variant];
    TypeId in_t[kMaxArity];
    const float* in_f[kMaxArity];
    uint32_t in_term[kMaxArity];
    std::fill(in_term, in_term + kMaxArity, kNoTerm);
    // Every input a memoized term (or a pool tensor); the memo's terms have at most two.
    bool known = op.arity <= 2;
    for (int i = 0; i < op.arity; ++i) {
      TensorId t = gop.in[i];
      if (!computed_before(p, t, k)) return r;
      in_t[i] = types_[t];
      in_f[i] = values_[t];
      in_term[i] = terms_[t];
      known = known && in_term[i] != kNoTerm;
    }
    uint32_t ids[kMaxOutputs] = {kNoTerm, kNoTerm};
    bool hit = known;
    for (int o = 0; o < op.num_outputs && hit; ++o) {
      ids[o] = memo_.find(gop.variant, o, in_term[0], in_term[1]);
      hit = ids[o] != kNoTerm;
    }
    if (hit) {
      for (int o = 0; o < op.num_outputs; ++o) {
        TensorId t = op_output_id(p, k, o);
        const FloatMemo::Entry& e = memo_.entry(ids[o]);
        types_[t] = e.type;
        values_[t] = e.values.data();
        terms_[t] = ids[o];
        r.all_hashes.push_back(0);
      }
      continue;
    }
    const Applied& ap =
        ev_.apply(gop.variant, std::span<const TypeId>(in_t, static_cast<size_t>(op.arity)));
    if (!ap.ok) return r;
    float* out_f[kMaxOutputs];
    for (int o = 0; o < ap.num_out; ++o) {
      auto& buf = own[static_cast<size_t>(2 * k + o)];
      buf.assign(static_cast<size_t>(ev_.types().numel(ap.out[o])), 0.0f);
      out_f[o] = buf.data();
    }
    ev_.run<float>(gop.variant, ap,
                   std::span<const float* const>(in_f, static_cast<size_t>(op.arity)),
                   std::span<float* const>(out_f, static_cast<size_t>(ap.num_out)));
    for (int o = 0; o < ap.num_out; ++o) {
      TensorId t = op_output_id(p, k, o);
      const auto& buf = own[static_cast<size_t>(2 * k + o)];
      uint32_t id =
          known ? memo_.add(gop.variant, o, in_term[0], in_term[1], ap.out[o], buf) : kNoTerm;
      types_[t] = ap.out[o];
      values_[t] = id != kNoTerm ? memo_.entry(id).values.data() : buf.data();
      terms_[t] = id;
      r.all_hashes.push_back(0);
    }
  }
  r.outputs = graph_outputs(s_, g);
  for (TensorId t : r.outputs) {
    r.output_hashes.push_back(0);
    const float* v = values_[t];
    r.output_f32.emplace_back(v, v + ev_.types().numel(types_[t]));
  }
  r.ok = true;
  return r;
}

}  // namespace graphsub::gen
