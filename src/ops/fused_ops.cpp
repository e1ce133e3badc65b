// The runtimes' fused kernels as operators: ONNX Runtime's CPU operators of the com.microsoft
// domain (FusedMatMul, BiasGelu, FastGelu, QuickGelu, SkipLayerNormalization,
// SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization, MultiHeadAttention,
// Attention; GroupQueryAttention is in ort_gqa_ops.cpp). Each is the composition of primitive
// operators its axiom in specs/operators.axioms states, and its reference kernel runs that
// composition with the primitives' own registered kernels, so the two cannot drift apart.
// Two factors the language has no primitive for are applied as formulas: QuickGelu's
// x * sigmoid(alpha x) (its axiom covers alpha 1, silu) and FusedMatMul's alpha. check-axioms
// tests the axioms, and tests/python compares each kernel with ONNX Runtime's. OpDef::runtime
// names the runtime that runs them: a file holding one runs there only.
//
// IR attributes carry the ONNX attribute names, so the ONNX stage reads and writes them by
// name. Optional trailing inputs are optional inputs here; the skip normalizations have two
// outputs, the normalized sum and the sum itself (ONNX Runtime's output 3,
// input_skip_bias_sum), which pre-norm blocks read as the next residual.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/families.h"
#include "ops/float_params.h"
#include "ops/kernel_util.h"

namespace graphsub {
namespace {

constexpr const char* kOrt = "onnxruntime";

TensorType plain(const TensorType& t) {
  return derived_type(t, t.shape);
}

// A per-channel vector of the last axis (bias, gamma, beta), named `what` in errors.
void require_channel_vector(const char* op, const char* what, const TensorType& x,
                            const TensorType& v) {
  if (v.shape != Shape{x.shape.empty() ? 0 : x.shape.back()})
    throw Error(fmt::format("{}: {} must be [{}] for input {}, got {}", op, what,
                            x.shape.empty() ? 0 : x.shape.back(), shape_str(x.shape),
                            shape_str(v.shape)));
}

Attrs norm_attrs(const char* op, double eps) {
  if (std::string_view(op) == "layernorm") return {{"axis", int64_t{-1}}, {"epsilon", eps}};
  return {{"axis", int64_t{-1}}, {"epsilon", eps}, {"stash_type", int64_t{1}}};
}

// ---- BiasGelu(x, bias) = gelu(x + bias); FastGelu(x[, bias]) = gelu_tanh(x[ + bias]) ----
std::vector<TensorType> infer_bias_act(const Attrs&, std::span<const TensorType> in) {
  if (in[0].rank() < 1) throw Error("bias activation: the input must have rank >= 1");
  if (in.size() > 1) require_channel_vector("bias activation", "bias", in[0], in[1]);
  return {plain(in[0])};
}

template <const char* Act, class T>
void kernel_bias_act(const KernelIO<T>& io) {
  const TensorType x = plain(io.in_types[0]);
  std::vector<T> sum;
  const T* pre = io.in[0];
  if (io.in.size() > 1) {
    sum = buffer<T>(x);
    run_primitive<T>("add", {}, {x, io.in_types[1]}, {io.in[0], io.in[1]}, x, sum.data());
    pre = sum.data();
  }
  run_primitive<T>(Act, {}, {x}, {pre}, x, io.out[0]);
}

constexpr char kGelu[] = "gelu";
constexpr char kGeluTanh[] = "gelu_tanh";

// ---- QuickGelu(x) = x * sigmoid(alpha * x) ----
template <class T>
void kernel_quick_gelu(const KernelIO<T>& io) {
  T alpha = factor<T>(io.attrs.f("alpha"));
  int64_t n = io.out_types[0].numel();
  for (int64_t i = 0; i < n; ++i) {
    T x = io.in[0][i];
    io.out[0][i] = x * Scalar<T>::sigmoid(alpha * x);
  }
}

// ---- FusedMatMul(a, b) = alpha * op(a) op(b), op a transpose of the last two axes ----
Shape swap_last_two(Shape s) {
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return s;
}

std::vector<int64_t> swap_last_two_perm(size_t rank) {
  std::vector<int64_t> p(rank);
  for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int64_t>(i);
  std::swap(p[rank - 1], p[rank - 2]);
  return p;
}

// The operands as matmul reads them (transposed where the attributes say so).
std::pair<TensorType, TensorType> fused_matmul_operands(const Attrs& a,
                                                        std::span<const TensorType> in) {
  if (in[0].rank() < 2 || in[1].rank() < 2)
    throw Error(fmt::format("fused matmul: operands must have rank >= 2, got {} and {}",
                            shape_str(in[0].shape), shape_str(in[1].shape)));
  TensorType x = plain(in[0]), y = plain(in[1]);
  if (a.i("transA")) x.shape = swap_last_two(x.shape);
  if (a.i("transB")) y.shape = swap_last_two(y.shape);
  return {x, y};
}

std::vector<TensorType> infer_fused_matmul(const Attrs& a, std::span<const TensorType> in) {
  auto [x, y] = fused_matmul_operands(a, in);
  std::vector<TensorType> ops{x, y};
  return {plain(op_def("matmul").infer({{"act", std::string("none")}}, ops)[0])};
}

template <class T>
void kernel_fused_matmul(const KernelIO<T>& io) {
  auto [x, y] = fused_matmul_operands(io.attrs, io.in_types);
  const T* operand[2] = {io.in[0], io.in[1]};
  std::vector<T> moved[2];
  for (int k = 0; k < 2; ++k) {
    if (!io.attrs.i(k == 0 ? "transA" : "transB")) continue;
    const TensorType& t = k == 0 ? x : y;
    moved[k] = buffer<T>(t);
    run_primitive<T>("transpose", {{"perm", swap_last_two_perm(t.shape.size())}}, {io.in_types[k]},
                     {io.in[k]}, t, moved[k].data());
    operand[k] = moved[k].data();
  }
  const TensorType out = plain(io.out_types[0]);
  run_primitive<T>("matmul", {{"act", std::string("none")}}, {x, y}, {operand[0], operand[1]}, out,
                   io.out[0]);
  T alpha = factor<T>(io.attrs.f("alpha"));
  if (alpha == T{1}) return;
  for (int64_t i = 0, n = out.numel(); i < n; ++i) io.out[0][i] *= alpha;
}

OpCost cost_fused_matmul(const Attrs& a, std::span<const TensorType> in,
                         std::span<const TensorType> out) {
  OpCost c = streaming_cost(in, out, 0);
  double k =
      static_cast<double>(a.i("transA") ? in[0].shape[in[0].rank() - 2] : in[0].shape.back());
  c.flops = 2 * k * static_cast<double>(out[0].numel());
  return c;
}

// ---- skip normalizations: norm(x + skip[ + bias]), and the sum ----
// SkipLayerNormalization(x, skip, gamma[, beta[, bias]]) normalizes with layernorm;
// SkipSimplifiedLayerNormalization(x, skip, gamma[, bias]) with rms_norm.
template <const char* Norm>
std::vector<TensorType> infer_skip_norm(const Attrs&, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  if (x.rank() < 2)
    throw Error(fmt::format("skip normalization: the input must have rank >= 2, got {}",
                            shape_str(x.shape)));
  if (in[1].shape != x.shape)
    throw Error(fmt::format("skip normalization: skip {} must have the input's shape {}",
                            shape_str(in[1].shape), shape_str(x.shape)));
  static const char* names[] = {"input", "skip", "gamma", "beta", "bias"};
  bool layernorm = std::string_view(Norm) == "layernorm";
  for (size_t i = 2; i < in.size(); ++i)
    require_channel_vector("skip normalization", names[layernorm || i < 3 ? i : 4], x, in[i]);
  return {plain(x), plain(x)};
}

template <const char* Norm, class T>
void kernel_skip_norm(const KernelIO<T>& io) {
  const TensorType x = plain(io.in_types[0]);
  bool layernorm = std::string_view(Norm) == "layernorm";
  size_t bias_at = layernorm ? 4 : 3;
  // The sum is an output of its own: x + skip, then + bias.
  run_primitive<T>("add", {}, {x, x}, {io.in[0], io.in[1]}, x, io.out[1]);
  if (io.in.size() > bias_at) {
    std::vector<T> sum(io.out[1], io.out[1] + x.numel());
    run_primitive<T>("add", {}, {x, io.in_types[bias_at]}, {sum.data(), io.in[bias_at]}, x,
                     io.out[1]);
  }
  std::vector<TensorType> in_t{x, io.in_types[2]};
  std::vector<const T*> in{io.out[1], io.in[2]};
  if (layernorm && io.in.size() > 3) {
    in_t.push_back(io.in_types[3]);
    in.push_back(io.in[3]);
  }
  run_primitive<T>(Norm, norm_attrs(Norm, io.attrs.f("epsilon")), in_t, in, x, io.out[0]);
}

constexpr char kLayerNorm[] = "layernorm";
constexpr char kRmsNorm[] = "rms_norm";

// ---- SimplifiedLayerNormalization(x, scale) = rms_norm(x, scale) ----
std::vector<TensorType> infer_simplified_layernorm(const Attrs& a, std::span<const TensorType> in) {
  return op_def("rms_norm").infer(a, in);
}

template <class T>
void kernel_simplified_layernorm(const KernelIO<T>& io) {
  run_primitive<T>("rms_norm", io.attrs, {io.in_types[0], io.in_types[1]}, {io.in[0], io.in[1]},
                   io.out_types[0], io.out[0]);
}

// ---- MultiHeadAttention(q, k, v[, bias][, attention_bias]) ----
// = attention(q + bq, k + bk, v + bv, attention_bias)
// Q [B, S, N * d], K [B, L, N * d], V [B, L, N * dv], heads packed in the last axis (ONNX's
// 3-d Attention form with N query and N key/value heads); bias [N * d + N * d + N * dv] is
// added to each in turn; attention_bias [B or 1, N or 1, S, L] is added to the scores (the
// padding and causal masks as exporters compute them). K and V may also come with their heads
// split out, [B, N, L, d] (ONNX Runtime's BNSH key and value: exporters' grouped heads repeated,
// rotated keys, past keys appended), with no bias. The IR holds the optional inputs in
// the node's order and tells them apart by rank (runtime_operators.cpp writes each at its
// position). scale 0 is ONNX Runtime's default, 1/sqrt(d); unidirectional is the causal mask.
// Rank-2 operands with num_heads 1 are the axiom language's form, where the operator is
// (ort_mha ?scale ?q ?k ?v), ONNX's attention.

// K and V given as [B, N, L, d]: Q's heads are split out for attention and merged back after.
bool kv_heads_split(std::span<const TensorType> in) {
  return in.size() >= 3 && in[0].rank() == 3 && in[1].rank() == 4;
}

// Q [B, S, N * d] as [B, N, S, d].
TensorType query_heads_type(const TensorType& q, int64_t heads) {
  return derived_type(q, {q.shape[0], heads, q.shape[1], q.shape[2] / heads});
}

Attrs mha_attention_attrs(const Attrs& a, std::span<const TensorType> in) {
  int64_t heads = a.i("num_heads");
  const TensorType& q = in[0];
  if (heads < 1 || q.rank() < 2 || q.shape.back() % heads != 0)
    throw Error(fmt::format("multi-head attention: {} heads do not divide Q {}", heads,
                            shape_str(q.shape)));
  if (q.rank() == 2 && heads != 1)
    throw Error("multi-head attention: rank-2 operands are one head (num_heads 1)");
  double scale = a.f("scale");
  if (scale == 0)
    scale = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(q.shape.back() / heads, 1)));
  // rank 2: attention's matrix form; K and V split: attention of [B, N, S, d] operands.
  int64_t packed = q.rank() == 3 && !kv_heads_split(in) ? heads : 0;
  return {{"scale", scale},
          {"is_causal", a.i("unidirectional")},
          {"q_num_heads", packed},
          {"kv_num_heads", packed}};
}

// Where the optional inputs stand among the node's: -1 when absent.
struct MhaOptional {
  int bias = -1;            // rank 1
  int attention_bias = -1;  // rank 4, after the bias
};

MhaOptional mha_optional(std::span<const TensorType> in) {
  MhaOptional o;
  for (size_t i = 3; i < in.size(); ++i) {
    int at = static_cast<int>(i);
    if (in[i].rank() == 1 && o.bias < 0 && o.attention_bias < 0)
      o.bias = at;
    else if (in[i].rank() == 4 && o.attention_bias < 0)
      o.attention_bias = at;
    else
      throw Error(fmt::format(
          "multi-head attention: input {} {} is neither the bias (rank 1) nor the attention "
          "bias (rank 4, after the bias)",
          i, shape_str(in[i].shape)));
  }
  return o;
}

// Q [B, S, N * d] with K and V [B, N, L, d]: the output is [B, S, N * d].
std::vector<TensorType> infer_mha_kv_heads_split(const Attrs& a, std::span<const TensorType> in,
                                                 const MhaOptional& o) {
  const int64_t heads = a.i("num_heads");
  const Shape &q = in[0].shape, &k = in[1].shape, &v = in[2].shape;
  // ONNX Runtime takes K and V of one shape here.
  if (v != k || k[1] != heads || q[2] != heads * k[3] || o.bias >= 0)
    throw Error(fmt::format(
        "multi-head attention: with K and V of [batch, heads, length, head size], Q must be "
        "[batch, sequence, {} * {}], V of K's shape and no bias, got Q {}, K {}, V {}",
        heads, k[3], shape_str(q), shape_str(k), shape_str(v)));
  std::vector<TensorType> qkv{query_heads_type(plain(in[0]), heads), plain(in[1]), plain(in[2])};
  Attrs att = mha_attention_attrs(a, in);
  TensorType y = op_def("attention").infer(att, qkv)[0];
  return {derived_type(in[0], {q[0], q[1], heads * y.shape[3]})};
}

std::vector<TensorType> infer_mha(const Attrs& a, std::span<const TensorType> in) {
  if (in[0].rank() != 2 && in[0].rank() != 3)
    throw Error(fmt::format("multi-head attention: Q must be [batch, sequence, hidden], got {}",
                            shape_str(in[0].shape)));
  std::vector<TensorType> qkv{plain(in[0]), plain(in[1]), plain(in[2])};
  MhaOptional o = mha_optional(in);
  const bool split = kv_heads_split(in);
  const int64_t kv_len = split ? in[1].shape[2] : in[1].shape.size() > 1 ? in[1].shape[1] : 0;
  if (o.bias >= 0 && !split) {
    int64_t width = in[0].shape.back() + in[1].shape.back() + in[2].shape.back();
    if (in[o.bias].shape != Shape{width})
      throw Error(
          fmt::format("multi-head attention: bias must be [{}] (Q, K and V's widths), "
                      "got {}",
                      width, shape_str(in[o.bias].shape)));
  }
  if (o.attention_bias >= 0) {
    // ONNX Runtime broadcasts the batch and the heads only: [B or 1, N or 1, S, L].
    const Shape& m = in[o.attention_bias].shape;
    int64_t heads = a.i("num_heads");
    bool fits = in[0].rank() == 3 && (m[0] == in[0].shape[0] || m[0] == 1) &&
                (m[1] == heads || m[1] == 1) && m[2] == in[0].shape[1] && m[3] == kv_len;
    if (!fits)
      throw Error(fmt::format(
          "multi-head attention: attention_bias must be [{} or 1, {} or 1, {}, {}], got {}",
          in[0].shape[0], heads, in[0].rank() == 3 ? in[0].shape[1] : 0, kv_len, shape_str(m)));
  }
  if (split) return infer_mha_kv_heads_split(a, in, o);
  return op_def("attention").infer(mha_attention_attrs(a, in), qkv);
}

// ONNX's attention gives a query whose every key is masked out (its attention bias row all
// -inf) zeros; ONNX Runtime's MultiHeadAttention gives NaN, as its softmax does, and so does
// the composition its axiom states: those rows of Y [B, S, N * dv] are NaN.
void nan_fully_masked_queries(const TensorType& q, const TensorType& bias, const float* m,
                              int64_t heads, const TensorType& y, float* out) {
  const Shape& ms = bias.shape;  // [B or 1, N or 1, S, L]
  const int64_t batch = q.shape[0], seq = q.shape[1], len = ms[3];
  const int64_t dv = y.shape[2] / heads;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t s = 0; s < seq; ++s) {
        const float* row =
            m + (((ms[0] == 1 ? 0 : b) * ms[1] + (ms[1] == 1 ? 0 : h)) * seq + s) * len;
        if (!std::all_of(row, row + len, [](float x) { return x == -INFINITY; })) continue;
        std::fill_n(out + (b * seq + s) * y.shape[2] + h * dv, dv, NAN);
      }
}

// K and V of [B, N, L, d]: Q's heads moved out ([B, S, N, d] -> [B, N, S, d]), attention of
// the batch of heads, the result's heads moved back and merged ([B, N, S, dv] -> [B, S, N * dv]).
template <class T>
void run_split_heads_attention(const KernelIO<T>& io, std::vector<TensorType> qkv,
                               std::vector<const T*> data) {
  const int64_t heads = io.attrs.i("num_heads");
  const TensorType q = plain(io.in_types[0]);
  const TensorType q_heads = query_heads_type(q, heads);
  const TensorType q_split = derived_type(q, {q.shape[0], q.shape[1], heads, q.shape[2] / heads});
  const Attrs swap_middle{{"perm", std::vector<int64_t>{0, 2, 1, 3}}};
  std::vector<T> q4 = buffer<T>(q_heads);
  run_primitive<T>("transpose", swap_middle, {q_split}, {data[0]}, q_heads, q4.data());
  qkv[0] = q_heads;
  data[0] = q4.data();
  const TensorType y = plain(io.out_types[0]);
  const TensorType y_heads = derived_type(y, {y.shape[0], heads, y.shape[1], y.shape[2] / heads});
  std::vector<T> y4 = buffer<T>(y_heads);
  run_primitive<T>("attention", mha_attention_attrs(io.attrs, io.in_types), qkv, data, y_heads,
                   y4.data());
  run_primitive<T>("transpose", swap_middle, {y_heads}, {static_cast<const T*>(y4.data())},
                   derived_type(y, {y.shape[0], y.shape[1], heads, y.shape[2] / heads}), io.out[0]);
}

template <class T>
void kernel_mha(const KernelIO<T>& io) {
  std::vector<TensorType> qkv{plain(io.in_types[0]), plain(io.in_types[1]), plain(io.in_types[2])};
  std::vector<const T*> data{io.in[0], io.in[1], io.in[2]};
  std::vector<T> biased[3];
  MhaOptional o = mha_optional(io.in_types);
  if (o.bias >= 0) {
    int64_t offset = 0;
    for (size_t i = 0; i < 3; ++i) {
      int64_t width = qkv[i].shape.back();
      biased[i] = buffer<T>(qkv[i]);
      TensorType part = derived_type(qkv[i], {width});
      run_primitive<T>("add", {}, {qkv[i], part},
                       {data[i], io.in[static_cast<size_t>(o.bias)] + offset}, qkv[i],
                       biased[i].data());
      data[i] = biased[i].data();
      offset += width;
    }
  }
  if (o.attention_bias >= 0) {
    qkv.push_back(plain(io.in_types[static_cast<size_t>(o.attention_bias)]));
    data.push_back(io.in[static_cast<size_t>(o.attention_bias)]);
  }
  if (kv_heads_split(io.in_types)) {
    run_split_heads_attention<T>(io, std::move(qkv), std::move(data));
  } else {
    run_primitive<T>("attention", mha_attention_attrs(io.attrs, io.in_types), qkv, data,
                     plain(io.out_types[0]), io.out[0]);
  }
  if constexpr (std::is_floating_point_v<T>)
    if (o.attention_bias >= 0)
      nan_fully_masked_queries(io.in_types[0], io.in_types[static_cast<size_t>(o.attention_bias)],
                               io.in[static_cast<size_t>(o.attention_bias)],
                               io.attrs.i("num_heads"), io.out_types[0], io.out[0]);
}

// (ort_mha ?scale ?q ?k ?v): matrices, one batch and head; (ort_mha_heads ?heads ?scale ?q ?k
// ?v): [B, S, heads * D], the node's own form; (ort_mha_heads_masked ?heads ?scale ?q ?k ?v
// ?m): that form with the attention bias; (ort_mha_kv_masked ?scale ?q ?k ?v ?m): K and V of
// [B, N, L, D], whose heads axis is the number of heads. No bias, not causal, the scale given.
Attrs mha_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType> in) {
  if (p.size() != 1 && p.size() != 2)
    throw Error("ort_mha: expected the scale, or the heads and the scale");
  int64_t heads = p.size() == 2 ? std::get<int64_t>(p[0]) : int64_t{1};
  if (p.size() == 1 && kv_heads_split(in)) heads = in[1].shape[1];
  return {{"num_heads", heads},
          {"scale", static_cast<double>(param_float("ort_mha", p.back()))},
          {"unidirectional", int64_t{0}}};
}

std::optional<std::vector<AxiomParam>> mha_attrs_to_params(const Attrs& a,
                                                           std::span<const TensorType> in) {
  if (a.i("unidirectional") != 0 || a.f("scale") == 0) return std::nullopt;
  auto scale = floats_param({static_cast<float>(a.f("scale"))});
  if (!scale) return std::nullopt;
  if (kv_heads_split(in)) {  // only with the batch's own attention bias
    if (in.size() != 4 || in[3].rank() != 4 || in[3].shape[0] != in[0].shape[0])
      return std::nullopt;
    return std::vector<AxiomParam>{*scale};
  }
  // A bias, or an attention bias of the matrix form or without the batch's own, lies outside.
  if (in.size() > 3 &&
      (in.size() > 4 || in[3].rank() != 4 || in[0].rank() != 3 || in[3].shape[0] != in[0].shape[0]))
    return std::nullopt;
  if (in[0].rank() == 2) return std::vector<AxiomParam>{*scale};
  if (in[0].rank() == 3) return std::vector<AxiomParam>{a.i("num_heads"), *scale};
  return std::nullopt;
}

// ---- Attention(x, w[, bias]) = MultiHeadAttention(x wq + bq, x wk + bk, x wv + bv) ----
// ONNX Runtime's BERT-form attention: one packed projection w [D_in, Dq + Dk + Dv] (the three
// widths in qkv_hidden_sizes, equal thirds when it is empty), its bias, then num_heads heads
// of attention. Rank-2 x with one head is the axiom language's form, (ort_attention ?scale ?x
// ?w): the weight's thirds are q's, k's and v's projections.
std::vector<int64_t> qkv_widths(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  const TensorType& w = in[1];
  if ((x.rank() != 2 && x.rank() != 3) || w.rank() != 2 || w.shape[0] != x.shape.back())
    throw Error(
        fmt::format("packed attention: input {} and weight {} must be [batch, sequence, "
                    "D] and [D, Dq + Dk + Dv]",
                    shape_str(x.shape), shape_str(w.shape)));
  std::vector<int64_t> widths = a.ints("qkv_hidden_sizes");
  if (widths.empty()) widths.assign(3, w.shape[1] / 3);
  if (widths.size() != 3 || widths[0] != widths[1] ||
      widths[0] + widths[1] + widths[2] != w.shape[1])
    throw Error(
        fmt::format("packed attention: qkv_hidden_sizes {} do not split the weight {} "
                    "into Q, K and V (Q and K of one width)",
                    shape_str(a.ints("qkv_hidden_sizes")), shape_str(w.shape)));
  if (in.size() > 2 && in[2].shape != Shape{w.shape[1]})
    throw Error(fmt::format("packed attention: bias must be [{}], got {}", w.shape[1],
                            shape_str(in[2].shape)));
  return widths;
}

// The projected Q, K and V types.
std::vector<TensorType> projected(const TensorType& x, const std::vector<int64_t>& widths) {
  std::vector<TensorType> out;
  for (int64_t width : widths) {
    Shape s = x.shape;
    s.back() = width;
    out.push_back(derived_type(x, std::move(s)));
  }
  return out;
}

Attrs packed_mha_attrs(const Attrs& a) {
  return {{"num_heads", a.i("num_heads")},
          {"scale", a.f("scale")},
          {"unidirectional", a.i("unidirectional")},
          {"mask_filter_value", a.f("mask_filter_value")}};
}

std::vector<TensorType> infer_packed_attention(const Attrs& a, std::span<const TensorType> in) {
  std::vector<TensorType> qkv = projected(plain(in[0]), qkv_widths(a, in));
  return op_def("ort_mha").infer(packed_mha_attrs(a), qkv);
}

template <class T>
void kernel_packed_attention(const KernelIO<T>& io) {
  const TensorType x = plain(io.in_types[0]);
  std::vector<int64_t> widths = qkv_widths(io.attrs, io.in_types);
  std::vector<TensorType> qkv = projected(x, widths);
  const Attrs no_act{{"act", std::string("none")}};
  std::vector<std::vector<T>> parts;
  std::vector<const T*> data;
  int64_t from = 0;
  for (size_t i = 0; i < 3; ++i) {
    // x times the weight's columns of this part (a slice of the weight).
    TensorType wt = derived_type(x, {io.in_types[1].shape[0], widths[i]});
    std::vector<T> w_part = buffer<T>(wt);
    Attrs cut{{"starts", std::vector<int64_t>{from}},
              {"ends", std::vector<int64_t>{from + widths[i]}},
              {"axes", std::vector<int64_t>{1}},
              {"steps", std::vector<int64_t>{1}}};
    run_primitive<T>("slice", cut, {plain(io.in_types[1])}, {io.in[1]}, wt, w_part.data());
    parts.push_back(buffer<T>(qkv[i]));
    run_primitive<T>("matmul", no_act, {x, wt}, {io.in[0], w_part.data()}, qkv[i],
                     parts.back().data());
    data.push_back(parts.back().data());
    from += widths[i];
  }
  // The bias has MultiHeadAttention's layout (Q's, K's and V's parts in turn): it adds it.
  if (io.in.size() > 2) {
    qkv.push_back(plain(io.in_types[2]));
    data.push_back(io.in[2]);
  }
  run_primitive<T>("ort_mha", packed_mha_attrs(io.attrs), qkv, data, plain(io.out_types[0]),
                   io.out[0]);
}

Attrs packed_attention_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  if (p.size() != 1) throw Error("ort_attention: expected one parameter (the scale)");
  return {{"num_heads", int64_t{1}},
          {"scale", static_cast<double>(param_float("ort_attention", p[0]))},
          {"unidirectional", int64_t{0}}};
}

// In the language: a matrix x, one head, equal thirds, no bias, not causal, the scale given.
std::optional<std::vector<AxiomParam>> packed_attention_attrs_to_params(
    const Attrs& a, std::span<const TensorType> in) {
  if (in.size() > 2 || in[0].rank() != 2 || a.i("num_heads") != 1 || a.i("unidirectional") != 0 ||
      a.f("scale") == 0 || !a.ints("qkv_hidden_sizes").empty())
    return std::nullopt;
  auto scale = floats_param({static_cast<float>(a.f("scale"))});
  if (!scale) return std::nullopt;
  return std::vector<AxiomParam>{*scale};
}

// ---- the axiom language: float attributes spelled exactly (ops/float_params.h) ----
Attrs quick_gelu_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  return one_float_attrs("alpha", p);
}

std::optional<std::vector<AxiomParam>> quick_gelu_attrs_to_params(const Attrs& a,
                                                                  std::span<const TensorType>) {
  return one_float_params(a, "alpha");
}

Attrs fused_matmul_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  if (p.size() != 3) throw Error("ort_fused_matmul: expected three parameters");
  return {{"alpha", static_cast<double>(param_float("ort_fused_matmul", p[0]))},
          {"transA", param_int("ort_fused_matmul", p, 1)},
          {"transB", param_int("ort_fused_matmul", p, 2)}};
}

std::optional<std::vector<AxiomParam>> fused_matmul_attrs_to_params(const Attrs& a,
                                                                    std::span<const TensorType>) {
  auto alpha = floats_param({static_cast<float>(a.f("alpha"))});
  if (!alpha) return std::nullopt;
  return std::vector<AxiomParam>{*alpha, a.i("transA"), a.i("transB")};
}

// A skip normalization: x, skip, gamma and its optional vectors (up to `max_inputs`); two
// outputs, named in the language `name` and `name`_sum. ONNX Runtime's default epsilon for
// both is 1e-12.
template <const char* Norm>
OpDef skip_norm_def(const char* name, int max_inputs, std::vector<AxiomForm> forms = {}) {
  return {.name = name,
          .axiom_name = name,
          .min_inputs = 3,
          .max_inputs = max_inputs,
          .attrs = {float_attr("epsilon", 1e-12)},
          .infer = infer_skip_norm<Norm>,
          .kernel_f32 = kernel_skip_norm<Norm, float>,
          .kernel_u32 = kernel_skip_norm<Norm, uint32_t>,
          .standin = true,
          .runtime = kOrt,
          .axiom_params = {"eps"},
          .params_to_attrs = epsilon_params_to_attrs,
          .attrs_to_params = epsilon_attrs_to_params,
          .axiom_outputs = {name, std::string(name) + "_sum"},
          .axiom_forms = std::move(forms)};
}

// ONNX Runtime's RotaryEmbedding: ONNX's rotary embedding over caches read at position ids,
// which are [batch, sequence] or one value, the first position of every batch's sequence. The
// kernel runs rotary_embedding's with the ids spelled out. In the axiom language it is
// (ort_rotary_embedding ?x ?cos ?sin): one batch and head from position 0 over a cache of the
// sequence's length, which is ONNX's form with cos and sin per position.
constexpr int64_t kMaxSpelledPositions = int64_t{1} << 22;

int64_t rotary_sequence(const TensorType& x) {
  return x.rank() == 4 ? x.shape[2] : x.rank() >= 2 ? x.shape[x.shape.size() - 2] : 0;
}

Attrs onnx_rotary_attrs(const Attrs& a, std::span<const TensorType> in) {
  if (a.f("scale") != 1.0)
    throw Error(fmt::format("ort_rotary_embedding: scale {} (graphsub reads 1)", a.f("scale")));
  std::vector<int64_t> ids = a.ints("position_ids");
  if (ids.empty()) throw Error("ort_rotary_embedding: position ids are required");
  if (ids.size() == 1) {
    int64_t seq = rotary_sequence(in[0]);
    int64_t batch = in[0].rank() >= 3 ? in[0].shape[0] : 1;
    int64_t first = ids[0];
    // Bounds before spelling the ids out: no overflow, no list larger than a real batch.
    if (first < 0 || first > kMaxElements)
      throw Error(fmt::format("ort_rotary_embedding: first position {} out of range", first));
    if (batch * seq > kMaxSpelledPositions)
      throw Error(
          fmt::format("ort_rotary_embedding: {} batches of {} positions, more than the {} "
                      "graphsub spells out",
                      batch, seq, kMaxSpelledPositions));
    ids.clear();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < seq; ++t) ids.push_back(first + t);
  }
  return {{"interleaved", a.i("interleaved")},
          {"rotary_embedding_dim", a.i("rotary_embedding_dim")},
          {"num_heads", a.i("num_heads")},
          {"position_ids", std::move(ids)}};
}

std::vector<TensorType> infer_ort_rotary(const Attrs& a, std::span<const TensorType> in) {
  return op_def("rotary_embedding").infer(onnx_rotary_attrs(a, in), in);
}

template <class T>
void kernel_ort_rotary(const KernelIO<T>& io) {
  run_primitive<T>("rotary_embedding", onnx_rotary_attrs(io.attrs, io.in_types),
                   {io.in_types.begin(), io.in_types.end()}, {io.in.begin(), io.in.end()},
                   io.out_types[0], io.out[0]);
}

Attrs ort_rotary_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  if (!p.empty()) throw Error("ort_rotary_embedding: expected no parameters");
  return {{"position_ids", std::vector<int64_t>{0}}};
}

std::optional<std::vector<AxiomParam>> ort_rotary_attrs_to_params(const Attrs& a,
                                                                  std::span<const TensorType> in) {
  if (in[0].rank() != 2 || a.i("interleaved") != 0 || a.f("scale") != 1.0) return std::nullopt;
  int64_t r = a.i("rotary_embedding_dim"), seq = in[0].shape[0];
  if ((r != 0 && r != in[0].shape[1]) || in[1].shape[0] != seq) return std::nullopt;
  const std::vector<int64_t>& ids = a.ints("position_ids");
  bool from_zero = ids.size() == 1 ? ids[0] == 0 : static_cast<int64_t>(ids.size()) == seq;
  for (size_t t = 0; from_zero && ids.size() > 1 && t < ids.size(); ++t)
    from_zero = ids[t] == static_cast<int64_t>(t);
  if (!from_zero) return std::nullopt;
  return std::vector<AxiomParam>{};
}

}  // namespace

void register_fused_ops(std::vector<OpDef>& defs) {
  defs.push_back({.name = "ort_bias_gelu",
                  .axiom_name = "ort_bias_gelu",
                  .min_inputs = 2,
                  .max_inputs = 2,
                  .infer = infer_bias_act,
                  .kernel_f32 = kernel_bias_act<kGelu, float>,
                  .kernel_u32 = kernel_bias_act<kGelu, uint32_t>,
                  .standin = true,
                  .runtime = kOrt});
  defs.push_back({.name = "ort_fast_gelu",
                  .axiom_name = "ort_fast_gelu",
                  .min_inputs = 1,
                  .max_inputs = 2,
                  .infer = infer_bias_act,
                  .kernel_f32 = kernel_bias_act<kGeluTanh, float>,
                  .kernel_u32 = kernel_bias_act<kGeluTanh, uint32_t>,
                  .standin = true,
                  .runtime = kOrt});
  defs.push_back({.name = "ort_quick_gelu",
                  .axiom_name = "ort_quick_gelu",
                  .min_inputs = 1,
                  .max_inputs = 1,
                  .attrs = {float_attr("alpha", 1.702)},
                  .infer = same_as_first,
                  .kernel_f32 = kernel_quick_gelu<float>,
                  .kernel_u32 = kernel_quick_gelu<uint32_t>,
                  .elementwise = true,
                  .standin = true,
                  .runtime = kOrt,
                  .axiom_params = {"alpha"},
                  .params_to_attrs = quick_gelu_params_to_attrs,
                  .attrs_to_params = quick_gelu_attrs_to_params});
  defs.push_back({.name = "ort_fused_matmul",
                  .axiom_name = "ort_fused_matmul",
                  .min_inputs = 2,
                  .max_inputs = 2,
                  .attrs = {float_attr("alpha", 1.0), int_attr("transA", 0), int_attr("transB", 0)},
                  .infer = infer_fused_matmul,
                  .kernel_f32 = kernel_fused_matmul<float>,
                  .kernel_u32 = kernel_fused_matmul<uint32_t>,
                  .cost = cost_fused_matmul,
                  .runtime = kOrt,
                  .axiom_params = {"scale", "trans", "trans"},
                  .params_to_attrs = fused_matmul_params_to_attrs,
                  .attrs_to_params = fused_matmul_attrs_to_params});
  // With beta (x, skip, gamma, beta): the form a LayerNormalization with a bias fuses into.
  defs.push_back(skip_norm_def<kLayerNorm>("ort_skip_layernorm", 5, {{"ort_skip_layernorm_b", 4}}));
  defs.push_back(skip_norm_def<kRmsNorm>("ort_skip_simplified_layernorm", 4));
  defs.push_back(
      {.name = "ort_mha",
       .axiom_name = "ort_mha",
       .min_inputs = 3,
       .max_inputs = 5,
       .attrs = {required_attr("num_heads", AttrKind::Int), float_attr("scale", 0.0),
                 int_attr("unidirectional", 0), float_attr("mask_filter_value", -10000.0)},
       .infer = infer_mha,
       .kernel_f32 = kernel_mha<float>,
       .kernel_u32 = kernel_mha<uint32_t>,
       .cost =
           [](const Attrs& a, std::span<const TensorType> in, std::span<const TensorType> out) {
             std::vector<TensorType> qkv{in[0], in[1], in[2]};
             if (kv_heads_split(in)) qkv[0] = query_heads_type(in[0], a.i("num_heads"));
             return op_cost(op_def("attention"), mha_attention_attrs(a, in), qkv, out);
           },
       .standin = true,
       .runtime = kOrt,
       .axiom_params = {"scale"},
       .params_to_attrs = mha_params_to_attrs,
       .attrs_to_params = mha_attrs_to_params,
       .axiom_forms = {
           {.name = "ort_mha_heads", .num_tensors = 3, .params = {"heads", "scale"}},
           {.name = "ort_mha_heads_masked", .num_tensors = 4, .params = {"heads", "scale"}},
           {.name = "ort_mha_kv_masked", .num_tensors = 4, .params = {"scale"}}}});
  defs.push_back(
      {.name = "ort_attention",
       .axiom_name = "ort_attention",
       .min_inputs = 2,
       .max_inputs = 3,
       .attrs = {required_attr("num_heads", AttrKind::Int), float_attr("scale", 0.0),
                 int_attr("unidirectional", 0), float_attr("mask_filter_value", -10000.0),
                 ints_attr("qkv_hidden_sizes")},
       .infer = infer_packed_attention,
       .kernel_f32 = kernel_packed_attention<float>,
       .kernel_u32 = kernel_packed_attention<uint32_t>,
       .cost =
           [](const Attrs& a, std::span<const TensorType> in, std::span<const TensorType> out) {
             std::vector<TensorType> qkv = projected(in[0], qkv_widths(a, in));
             OpCost c = op_cost(op_def("ort_mha"), packed_mha_attrs(a), qkv, out);
             c.flops += 2.0 * static_cast<double>(in[0].numel() * in[1].shape[1]);
             c.bytes += static_cast<double>(in[1].numel()) * 4;
             return c;
           },
       .standin = true,
       .runtime = kOrt,
       .axiom_params = {"scale"},
       .params_to_attrs = packed_attention_params_to_attrs,
       .attrs_to_params = packed_attention_attrs_to_params});
  defs.push_back(
      {.name = "ort_rotary_embedding",
       .axiom_name = "ort_rotary_embedding",
       .min_inputs = 3,
       .max_inputs = 3,
       .attrs = {int_attr("interleaved", 0), int_attr("rotary_embedding_dim", 0),
                 int_attr("num_heads", 0), float_attr("scale", 1.0), ints_attr("position_ids")},
       .infer = infer_ort_rotary,
       .kernel_f32 = kernel_ort_rotary<float>,
       .kernel_u32 = kernel_ort_rotary<uint32_t>,
       .cost =
           [](const Attrs& a, std::span<const TensorType> in, std::span<const TensorType> out) {
             return op_cost(op_def("rotary_embedding"), onnx_rotary_attrs(a, in), in, out);
           },
       .runtime = kOrt,
       .params_to_attrs = ort_rotary_params_to_attrs,
       .attrs_to_params = ort_rotary_attrs_to_params});
  defs.push_back(
      {.name = "ort_simplified_layernorm",
       .axiom_name = "ort_simplified_layernorm",
       .min_inputs = 2,
       .max_inputs = 2,
       .attrs = {int_attr("axis", -1), float_attr("epsilon", 1e-5), int_attr("stash_type", 1)},
       .infer = infer_simplified_layernorm,
       .kernel_f32 = kernel_simplified_layernorm<float>,
       .kernel_u32 = kernel_simplified_layernorm<uint32_t>,
       .standin = true,
       .runtime = kOrt,
       .axiom_params = {"eps"},
       .params_to_attrs = epsilon_params_to_attrs,
       .attrs_to_params = last_axis_epsilon_params});
}

}  // namespace graphsub
