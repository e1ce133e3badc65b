#include "rules/type_prechecks.h"

#include <algorithm>

#include "ops/int_list_param.h"

namespace graphsub::rules {

namespace {

// Grouped-query attention's arguments as its repeat target [B, Hkv, groups, L, D] fixes them: Q
// [B, Hkv * groups, S, D], K and V [B, Hkv, L, D], the mask [B or 1, Hq or 1, S, L]. Shapes that
// do not fit are left out of the join (four rank-4 shapes sharing only the batch are millions
// of tuples); the sequence S that Q and the mask share is left to the inference.
std::optional<TypeKey> grouped_key(const Term& t, size_t arg, const Shape& s,
                                   const ParamAssignment& params) {
  const Term& p = *t.args[1];
  std::vector<int64_t> g =
      param_ints("attention", p.kind == Term::Kind::Var ? params.at(p.name) : param_value(p));
  if (g.size() != 5 || s.size() != 4) return std::nullopt;
  int64_t hq = g[1] * g[2];
  bool fits = arg == 0  ? s[0] == g[0] && s[1] == hq && s[3] == g[4]
              : arg < 3 ? s == Shape{g[0], g[1], g[3], g[4]}
                        : (s[0] == 1 || s[0] == g[0]) && (s[1] == 1 || s[1] == hq) && s[3] == g[3];
  return fits ? std::optional<TypeKey>(TypeKey{}) : std::nullopt;
}

}  // namespace

std::optional<TypeKey> type_key(const Term& t, const AxiomOp& op, size_t arg, const TensorType& ty,
                                const ParamAssignment& params) {
  const std::string& n = op.op->name;
  const Shape& s = ty.shape;
  if (n == "ewadd" || n == "ewmul") return s;
  if (n == "smul")
    return arg == 1 ? (s.empty() ? std::optional<TypeKey>(TypeKey{}) : std::nullopt) : TypeKey{};
  if (n == "concat") {
    const Term& a = *t.args[0];
    AxiomParam v = a.kind == Term::Kind::Var ? params.at(a.name) : param_value(a);
    auto* axis = std::get_if<int64_t>(&v);
    if (!axis || *axis < 0 || *axis >= ty.rank()) return std::nullopt;
    TypeKey k = s;
    k[static_cast<size_t>(*axis)] = -1;
    k.push_back(ty.rank());
    return k;
  }
  if (n == "matmul") {
    if (s.size() < 2) return std::nullopt;
    TypeKey k(s.begin(), s.end() - 2);  // batch dimensions (equal ranks in the language)
    k.push_back(arg == 0 ? s.back() : s[s.size() - 2]);
    return k;
  }
  if (n == "conv") return s.size() == 4 ? std::optional<TypeKey>(TypeKey{}) : std::nullopt;
  // Attention in the language is one batch and head (matrices) or, for ONNX's attention, a
  // batch of heads in their own axis ([B, H, S, D], sharing B and H); its _heads forms pack
  // the heads in the last axis ([B, S, heads * D], sharing B). Without this key a
  // three-tensor operator would be tried on every triple of shapes. MultiHeadAttention's
  // _heads_masked form takes an attention bias of rank 4 ([B, H or 1, S, L]) sharing the batch;
  // its _kv_masked form takes K, V and the bias of rank 4 ([B, H, L, D]) with Q packed.
  if (n == "attention" || n == "ort_mha") {
    if (op.name == "attention_grouped_masked") return grouped_key(t, arg, s, params);
    if (op.name.ends_with("_kv_masked"))
      return s.size() == (arg == 0 ? 3u : 4u) ? std::optional(TypeKey{s[0]}) : std::nullopt;
    if (op.name.ends_with("_heads_masked"))
      return s.size() == (arg == 3 ? 4u : 3u) ? std::optional(TypeKey{s[0]}) : std::nullopt;
    if (op.name.ends_with("_heads"))
      return s.size() == 3 ? std::optional(TypeKey{s[0]}) : std::nullopt;
    if (s.size() == 2) return TypeKey{};
    if (n == "attention" && s.size() == 4) return TypeKey{s[0], s[1]};
    return std::nullopt;
  }
  // Rotary embedding in the language is one batch and head: x [S, H] takes cos and sin of
  // [S, H/2] (without this key it would be tried on every triple of matrices).
  if (n == "rotary_embedding" || n == "ort_rotary_embedding") {
    if (s.size() != 2) return std::nullopt;
    if (arg > 0) return TypeKey{s[0], s[1]};
    return s[1] % 2 == 0 ? std::optional<TypeKey>(TypeKey{s[0], s[1] / 2}) : std::nullopt;
  }
  // GroupQueryAttention in the language is one batch and head, every operand [rows, H] with
  // one row of query, key and value (the step its axioms state); the cache's rows are free.
  // Without this key its five matrices would be joined over every shape.
  if (n == "ort_gqa") {
    if (s.size() != 2 || (arg < 3 && s[0] != 1)) return std::nullopt;
    return TypeKey{s[1]};
  }
  // Normalizations over the last axis and the bias activations: each vector argument (scale,
  // bias) is as long as the data arguments' last axis (the skip normalizations have two data
  // arguments). Without this key a three-tensor operator would be tried on every triple.
  bool skip = n == "ort_skip_layernorm" || n == "ort_skip_layernorm_b" ||
              n == "ort_skip_simplified_layernorm";
  if (skip || n == "layernorm" || n == "layernorm_b" || n == "rms_norm" ||
      n == "ort_simplified_layernorm" || n == "ort_bias_gelu") {
    if (s.empty()) return std::nullopt;
    if (arg >= (skip ? 2u : 1u))
      return s.size() == 1 ? std::optional<TypeKey>(TypeKey{s[0]}) : std::nullopt;
    return TypeKey{s.back()};
  }
  return TypeKey{};
}

bool is_constant_term(const TermPtr& t) {
  if (t->kind != Term::Kind::App) return false;
  const AxiomOp* op = find_axiom_op(t->name);
  return op && op->is_constant();
}

namespace {

bool conv_may_fit(const TensorType& x, const TensorType& w, bool unpadded) {
  const Shape& xs = x.shape;
  const Shape& ws = w.shape;
  if (xs.size() != 4 || ws.size() != 4 || ws[1] < 1 || xs[1] % ws[1] != 0) return false;
  if (unpadded && (xs[2] < ws[2] || xs[3] < ws[3])) return false;
  return ws[0] % (xs[1] / ws[1]) == 0;
}

bool broadcast_may_fit(const TensorType& a, const TensorType& b) {
  const Shape& x = a.shape;
  const Shape& y = b.shape;
  for (size_t i = 1; i <= std::min(x.size(), y.size()); ++i) {
    int64_t p = x[x.size() - i], q = y[y.size() - i];
    if (p != q && p != 1 && q != 1) return false;
  }
  return true;
}

bool attention_may_fit(const TensorType& q, const TensorType& k, const TensorType& v) {
  size_t r = q.shape.size();
  if (k.shape.size() != r || v.shape.size() != r || r < 2 || r > 4)
    return true;  // inference decides
  return q.shape[r - 1] == k.shape[r - 1] && k.shape[r - 2] == v.shape[r - 2];
}

// MultiHeadAttention with K and V of [B, H, L, D]: Q [B, S, H * D], V of K's shape and the
// attention bias [B, H or 1, S, L]. Checked here, as most of the tuples of four rank-4 shapes
// the instance search meets are not well-typed.
bool mha_kv_may_fit(std::span<const std::optional<TensorType>> args) {
  if (args.size() < 4 || !args[0] || !args[1] || !args[2] || !args[3]) return true;
  const Shape &q = args[0]->shape, &k = args[1]->shape, &v = args[2]->shape, &m = args[3]->shape;
  if (q.size() != 3 || k.size() != 4 || v.size() != 4 || m.size() != 4) return false;
  return q[2] == k[1] * k[3] && v == k && m[0] == q[0] && (m[1] == 1 || m[1] == k[1]) &&
         m[2] == q[1] && m[3] == k[2];
}

// Grouped-query attention: Q [B, Hq, S, D], K and V [B, Hkv, L, D] with Hkv dividing Hq, the
// mask [B or 1, Hq or 1, S, L]: the arguments given must agree pairwise (absent ones, the
// constants, pass); grouped_key has already held each against the repeat's target.
bool grouped_may_fit(std::span<const std::optional<TensorType>> args) {
  auto shape = [&](size_t i) { return i < args.size() && args[i] ? &args[i]->shape : nullptr; };
  const Shape *q = shape(0), *k = shape(1), *v = shape(2), *m = shape(3);
  for (const Shape* x : {q, k, v, m})
    if (x && x->size() != 4) return false;
  if (q && k && ((*q)[0] != (*k)[0] || (*q)[3] != (*k)[3] || (*q)[1] % (*k)[1] != 0)) return false;
  if (k && v && *v != *k) return false;
  if (q && m && ((*m)[0] != 1 && (*m)[0] != (*q)[0])) return false;
  if (q && m && ((*m)[1] != 1 && (*m)[1] != (*q)[1])) return false;
  if (q && m && (*m)[2] != (*q)[2]) return false;
  return !(k && m && (*m)[3] != (*k)[2]);
}

}  // namespace

bool arguments_may_fit(const AxiomOp& op, bool unpadded,
                       std::span<const std::optional<TensorType>> args) {
  const std::string& n = op.op->name;
  auto given = [&](size_t count) {
    if (args.size() < count) return false;
    for (size_t i = 0; i < count; ++i)
      if (!args[i]) return false;
    return true;
  };
  if (n == "conv" && given(2)) return conv_may_fit(*args[0], *args[1], unpadded);
  if ((n == "add" || n == "mul") && given(2)) return broadcast_may_fit(*args[0], *args[1]);
  if (n == "ort_mha" && op.name.ends_with("_kv_masked")) return mha_kv_may_fit(args);
  if (op.name == "attention_grouped_masked") return grouped_may_fit(args);
  if ((n == "attention" || n == "ort_mha") && given(3))
    return attention_may_fit(*args[0], *args[1], *args[2]);
  return true;
}

bool unpadded_conv(const Term& t, const ParamAssignment& params) {
  const Term& p = *t.args[1];
  AxiomParam v = p.kind == Term::Kind::Var ? params.at(p.name) : param_value(p);
  return v == AxiomParam{std::string("valid")};
}

namespace {
void append_tree_key(std::string& k, const SplitTreePtr& t) {
  if (!t) {
    k += '.';
    return;
  }
  k += '(';
  k.append(reinterpret_cast<const char*>(&t->cut), sizeof t->cut);
  append_tree_key(k, t->left);
  append_tree_key(k, t->right);
}
}  // namespace

void append_type_key(std::string& k, const std::optional<TensorType>& t) {
  if (!t) {
    k += '-';
    return;
  }
  k += static_cast<char>(t->rank());
  for (int64_t d : t->shape) k.append(reinterpret_cast<const char*>(&d), sizeof d);
  for (size_t a = 0; a < t->shape.size(); ++a) append_tree_key(k, t->split(a));
}

uint32_t TypeTable::id(const TensorType& t) {
  // The key is built in a kept buffer: most types are known, and a fresh string per lookup
  // (33 bytes at rank 4) was an allocation each.
  key_.clear();
  append_type_key(key_, t);
  if (auto it = ids_.find(key_); it != ids_.end()) return it->second;
  auto id = static_cast<uint32_t>(types_.size());
  ids_.emplace(key_, id);
  types_.push_back(t);
  return id;
}

}  // namespace graphsub::rules
