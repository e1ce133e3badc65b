// Scaled dot-product attention as ONNX defines it from opset 23 (ONNX's Attention, portable
// to every runtime of that opset): Y = softmax(scale * Q K^T + mask) V, per batch and head.
//
// Q [B, Hq, S, D], K [B, Hkv, L, D], V [B, Hkv, L, Dv] -> Y [B, Hq, S, Dv]. Hq is a multiple
// of Hkv: grouped-query attention shares each K/V head among Hq/Hkv consecutive query heads
// (Hkv = 1 is multi-query attention). The optional fourth input is an additive float mask that
// broadcasts to [B, Hq, S, L]; is_causal masks out key positions after the query's own
// (j > i, ONNX's lower-triangular mask anchored at the top left). ONNX's 3-d form, [batch,
// sequence, heads * head size] with q_num_heads and kv_num_heads, is read as such (its heads
// moved out and back by the kernel). Rank-2 operands are the case of one batch and one head,
// the form of the axiom language, where the operator is (attention ?scale ?q ?k ?v) (no mask,
// not causal) and its axiom is its composition.
//
// The reference kernel runs that composition with the primitives' own kernels (gather of the
// shared K/V heads, transpose, matmul, softmax, matmul); the scale and the causal mask are
// applied as formulas, there being no primitive for them. The IR holds the scale resolved (the
// ONNX importer writes 1/sqrt(D) where the attribute is absent).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/families.h"
#include "ops/float_params.h"
#include "ops/int_list_param.h"
#include "ops/kernel_util.h"

namespace graphsub {
namespace {

// The operands as four-dimensional shapes [batch, heads, sequence, head size]. Rank 2 is one
// batch and one head; rank 3 is [batch, sequence, heads * head size], split by the attributes
// q_num_heads and kv_num_heads (ONNX's 3-d form).
struct AttentionShapes {
  Shape q, k, v;
  bool packed = false;  // rank 3: heads packed into the last axis
  int64_t batch() const { return q[0]; }
  int64_t q_heads() const { return q[1]; }
  int64_t kv_heads() const { return k[1]; }
  int64_t q_len() const { return q[2]; }
  int64_t kv_len() const { return k[2]; }
  Shape scores() const { return {q[0], q[1], q[2], k[2]}; }
  Shape out() const { return {q[0], q[1], q[2], v[3]}; }
};

AttentionShapes attention_shapes(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& q = in[0];
  int64_t rank = q.rank();
  auto bad = [&](const std::string& what) {
    return Error(fmt::format("attention: {} (Q {}, K {}, V {})", what, shape_str(q.shape),
                             shape_str(in[1].shape), shape_str(in[2].shape)));
  };
  for (size_t i = 0; i < 3; ++i)
    if (in[i].rank() != rank || rank < 2 || rank > 4)
      throw bad(
          "Q, K and V must all have rank 4 ([batch, heads, sequence, head size]), all "
          "rank 3 ([batch, sequence, heads * head size]) or all rank 2");
  int64_t qh = a.i("q_num_heads"), kvh = a.i("kv_num_heads");
  AttentionShapes s;
  if (rank == 3) {
    if (qh < 1 || kvh < 1) throw bad("rank-3 operands need q_num_heads and kv_num_heads");
    auto heads = [&](const Shape& x, int64_t h, const char* name) {
      if (x[2] % h != 0) throw bad(fmt::format("{} heads do not divide {}'s last axis", h, name));
      return Shape{x[0], h, x[1], x[2] / h};
    };
    s = {heads(q.shape, qh, "Q"), heads(in[1].shape, kvh, "K"), heads(in[2].shape, kvh, "V"), true};
  } else {
    if (qh != 0 || kvh != 0) throw bad("q_num_heads and kv_num_heads are for rank-3 operands");
    auto as_4d = [](const Shape& x) { return x.size() == 2 ? Shape{1, 1, x[0], x[1]} : x; };
    s = {as_4d(q.shape), as_4d(in[1].shape), as_4d(in[2].shape), false};
  }
  if (s.k[0] != s.q[0] || s.v[0] != s.q[0]) throw bad("batch sizes differ");
  if (s.k[3] != s.q[3]) throw bad("Q and K head sizes differ");
  if (s.v[1] != s.k[1] || s.v[2] != s.k[2]) throw bad("K and V differ in heads or length");
  if (s.k[1] < 1 || s.q[1] % s.k[1] != 0)
    throw bad("the query heads are not a multiple of the key/value heads");
  return s;
}

std::vector<TensorType> infer_attention(const Attrs& a, std::span<const TensorType> in) {
  AttentionShapes s = attention_shapes(a, in);
  if (in.size() > 3 && broadcast_shapes("attention mask", s.scores(), in[3].shape) != s.scores())
    throw Error(fmt::format("attention: the mask {} does not broadcast to the scores {}",
                            shape_str(in[3].shape), shape_str(s.scores())));
  if (a.i("is_causal") != 0 && a.i("is_causal") != 1)
    throw Error(fmt::format("attention: is_causal must be 0 or 1, got {}", a.i("is_causal")));
  const TensorType& q = in[0];
  Shape out = q.rank() == 2 ? Shape{s.q_len(), s.v[3]}
              : s.packed    ? Shape{s.batch(), s.q_len(), s.q_heads() * s.v[3]}
                            : s.out();
  return {derived_type(q, std::move(out))};
}

// K or V with each of its heads repeated for the query heads that share it (gather on axis 1).
template <class T>
std::vector<T> shared_heads(const TensorType& t4, const T* data, int64_t q_heads) {
  int64_t group = q_heads / t4.shape[1];
  std::vector<int64_t> idx;
  for (int64_t h = 0; h < q_heads; ++h) idx.push_back(h / group);
  TensorType out = derived_type(t4, {t4.shape[0], q_heads, t4.shape[2], t4.shape[3]});
  std::vector<T> buf = buffer<T>(out);
  Attrs g{{"axis", int64_t{1}}, {"indices", idx}, {"indices_shape", std::vector<int64_t>{q_heads}}};
  run_primitive<T>("gather", g, {t4}, {data}, out, buf.data());
  return buf;
}

// [B, S, H * d] as [B, S, H, d], moved to [B, H, S, d] (and back with the same permutation).
const std::vector<int64_t> kSwapSequenceAndHeads{0, 2, 1, 3};

template <class T>
std::vector<T> moved_heads(const TensorType& from, const T* data, const TensorType& to) {
  std::vector<T> buf = buffer<T>(to);
  run_primitive<T>("transpose", {{"perm", kSwapSequenceAndHeads}}, {from}, {data}, to, buf.data());
  return buf;
}

template <class T>
void kernel_attention(const KernelIO<T>& io) {
  AttentionShapes s = attention_shapes(io.attrs, io.in_types);
  auto typed = [&](Shape sh) { return derived_type(io.in_types[0], std::move(sh)); };
  TensorType q = typed(s.q), k = typed(s.k), v = typed(s.v);
  const T* qd = io.in[0];
  const T* kd = io.in[1];
  const T* vd = io.in[2];
  std::vector<T> q_heads, k_heads, v_heads;
  if (s.packed) {  // rank 3: split the heads out of the last axis
    auto split = [&](const Shape& x4) { return typed({x4[0], x4[2], x4[1], x4[3]}); };
    q_heads = moved_heads<T>(split(s.q), qd, q);
    k_heads = moved_heads<T>(split(s.k), kd, k);
    v_heads = moved_heads<T>(split(s.v), vd, v);
    qd = q_heads.data();
    kd = k_heads.data();
    vd = v_heads.data();
  }
  std::vector<T> k_shared, v_shared;
  if (s.kv_heads() != s.q_heads()) {
    k_shared = shared_heads<T>(k, kd, s.q_heads());
    v_shared = shared_heads<T>(v, vd, s.q_heads());
    kd = k_shared.data();
    vd = v_shared.data();
    k = typed({s.batch(), s.q_heads(), s.kv_len(), s.k[3]});
    v = typed({s.batch(), s.q_heads(), s.kv_len(), s.v[3]});
  }
  TensorType kt = typed({s.batch(), s.q_heads(), s.k[3], s.kv_len()});
  std::vector<T> kt_d = buffer<T>(kt);
  run_primitive<T>("transpose", {{"perm", std::vector<int64_t>{0, 1, 3, 2}}}, {k}, {kd}, kt,
                   kt_d.data());
  TensorType scores = typed(s.scores());
  std::vector<T> sc = buffer<T>(scores);
  const Attrs no_act{{"act", std::string("none")}};
  run_primitive<T>("matmul", no_act, {q, kt}, {qd, kt_d.data()}, scores, sc.data());
  T scale = factor<T>(io.attrs.f("scale"));
  if (scale != T{1})
    for (T& x : sc) x *= scale;
  if (io.in.size() > 3) {
    std::vector<T> masked = buffer<T>(scores);
    run_primitive<T>("add", {}, {scores, io.in_types[3]}, {sc.data(), io.in[3]}, scores,
                     masked.data());
    sc.swap(masked);
  }
  if (io.attrs.i("is_causal")) {
    int64_t rows = s.batch() * s.q_heads(), len = s.q_len(), kv = s.kv_len();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < len; ++i)
        for (int64_t j = i + 1; j < kv; ++j)
          sc[static_cast<size_t>((r * len + i) * kv + j)] = Scalar<T>::lowest();
  }
  std::vector<T> probs = buffer<T>(scores);
  run_primitive<T>("softmax", {{"axis", int64_t{3}}}, {scores}, {sc.data()}, scores, probs.data());
  if constexpr (std::is_same_v<T, float>) {
    // A query whose every key is masked out attends to nothing: its row is zero (as ONNX
    // defines it), not the NaN a softmax of -inf alone gives.
    int64_t kv = s.kv_len();
    for (size_t r = 0; r * static_cast<size_t>(kv) < sc.size(); ++r) {
      const float* row = sc.data() + r * static_cast<size_t>(kv);
      if (std::all_of(row, row + kv, [](float x) { return std::isinf(x) && x < 0; }))
        std::fill_n(probs.data() + r * static_cast<size_t>(kv), kv, 0.0f);
    }
  }
  if (!s.packed) {
    run_primitive<T>("matmul", no_act, {scores, v}, {probs.data(), vd}, typed(s.out()), io.out[0]);
    return;
  }
  std::vector<T> y = buffer<T>(typed(s.out()));
  run_primitive<T>("matmul", no_act, {scores, v}, {probs.data(), vd}, typed(s.out()), y.data());
  run_primitive<T>("transpose", {{"perm", kSwapSequenceAndHeads}}, {typed(s.out())}, {y.data()},
                   typed({s.batch(), s.q_len(), s.q_heads(), s.v[3]}), io.out[0]);
}

// The repeat that grouped-query attention stands for: K [B, Hkv, L, D] expanded to [B, Hkv,
// Hq / Hkv, L, D] (then merged to Hq heads), for Q [B, Hq, S, D].
std::vector<int64_t> grouped_target(std::span<const TensorType> in) {
  const Shape &q = in[0].shape, &k = in[1].shape;
  if (q.size() != 4 || k.size() != 4 || k[1] < 1 || q[1] % k[1] != 0) return {};
  return {k[0], k[1], q[1] / k[1], k[2], k[3]};
}

OpCost cost_attention(const Attrs& a, std::span<const TensorType> in,
                      std::span<const TensorType> out) {
  AttentionShapes s = attention_shapes(a, in);
  OpCost c = streaming_cost(in, out, 0);
  double scores = static_cast<double>(numel(s.scores()));
  c.flops = scores * (2.0 * static_cast<double>(s.q[3] + s.v[3]) + 5.0);
  return c;
}

// (attention ?scale ?q ?k ?v): the scale spelled exactly, the heads in their own axis (or
// matrices); (attention_heads ?heads ?scale ?q ?k ?v): the 3-d form, [B, S, heads * D], as many
// key/value heads as query heads; (attention_grouped_masked ?heads ?target ?scale ?q ?k ?v ?m):
// Q [B, Hq, S, D], K and V [B, heads, L, D] shared by groups of Hq / heads query heads, an
// additive mask of rank 4; its target is the repeat's expand of K and V to [B, heads, Hq /
// heads, L, D] (axiom attention-grouped-masked), which the node's shapes determine. A node
// with a causal mask, or a mask of another rank, lies outside the language.
Attrs attention_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType> in) {
  if (p.size() < 1 || p.size() > 3)
    throw Error(
        "attention: expected the scale, the heads and the scale, or the grouped form's "
        "heads, target and scale");
  if (p.size() == 3 && in.size() == 4 &&
      (in[1].rank() != 4 || in[1].shape[1] != std::get<int64_t>(p[0]) ||
       grouped_target(in) != param_ints("attention", p[1])))
    throw Error(fmt::format("attention: heads {} and target {} are not the repeat of K {} for Q {}",
                            std::get<int64_t>(p[0]), shape_str(param_ints("attention", p[1])),
                            shape_str(in[1].shape), shape_str(in[0].shape)));
  int64_t heads = p.size() == 2 ? std::get<int64_t>(p[0]) : 0;
  return {{"scale", static_cast<double>(param_float("attention", p.back()))},
          {"is_causal", int64_t{0}},
          {"q_num_heads", heads},
          {"kv_num_heads", heads}};
}

std::optional<std::vector<AxiomParam>> attention_attrs_to_params(const Attrs& a,
                                                                 std::span<const TensorType> in) {
  if (in.size() > 4 || a.i("is_causal") != 0) return std::nullopt;
  auto scale = floats_param({static_cast<float>(a.f("scale"))});
  if (!scale) return std::nullopt;
  int64_t heads = a.i("q_num_heads");
  if (in.size() == 4) {
    if (heads != 0 || in[0].rank() != 4 || in[3].rank() != 4) return std::nullopt;
    auto target = ints_param(grouped_target(in));
    if (!target) return std::nullopt;
    return std::vector<AxiomParam>{in[1].shape[1], *target, *scale};
  }
  if (heads == 0) return std::vector<AxiomParam>{*scale};
  if (in[0].rank() == 3 && a.i("kv_num_heads") == heads)
    return std::vector<AxiomParam>{heads, *scale};
  return std::nullopt;
}

}  // namespace

void register_attention_ops(std::vector<OpDef>& defs) {
  defs.push_back(
      {.name = "attention",
       .axiom_name = "attention",
       .min_inputs = 3,
       .max_inputs = 4,
       .attrs = {required_attr("scale", AttrKind::Float), int_attr("is_causal", 0),
                 int_attr("q_num_heads", 0), int_attr("kv_num_heads", 0)},
       .infer = infer_attention,
       .kernel_f32 = kernel_attention<float>,
       .kernel_u32 = kernel_attention<uint32_t>,
       .cost = cost_attention,
       .standin = true,
       .onnx_since = 23,
       .axiom_params = {"scale"},
       .params_to_attrs = attention_params_to_attrs,
       .attrs_to_params = attention_attrs_to_params,
       .axiom_forms = {{.name = "attention_heads", .num_tensors = 3, .params = {"heads", "scale"}},
                       {.name = "attention_grouped_masked",
                        .num_tensors = 4,
                        .params = {"heads", "target", "scale"}}}});
}

}  // namespace graphsub
