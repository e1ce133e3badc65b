// ONNX Runtime's GroupQueryAttention (com.microsoft): causal attention of a decoder step with a
// key/value cache. Q [B, S, N * H], new K and V [B, S, Kn * H], optional past K and V
// [B, Kn, P, H]; the outputs are Y [B, S, N * H] and the present K and V [B, Kn, P + S, H],
// the past with the new keys and values appended. Each group of N / Kn query heads shares one
// key/value head. Query i, at position P + i, sees the keys at positions 0 .. P + i (and, with
// local_window_size w > 0, only the last w of them).
//
// The node's seqlens_k [B] and total_sequence_length (int32 run-time inputs) are held as ints
// attributes. graphsub reads the form without padding: every sequence is the whole cache, so
// seqlens_k is P + S - 1 and total_sequence_length P + S. Padded batches, run-time lengths,
// the rotary embedding inside the node, softcap and smooth softmax stay opaque. The forms
// ONNX Runtime's CPU kernel refuses are refused here too (a head size not a multiple of 8;
// several batches of several tokens after a past), so that graphsub never writes one.
//
// The reference kernel runs the composition: the heads moved out of the last axis (transpose),
// the cache extended (concat), then ONNX's attention with the causal mask anchored at the
// bottom right as an additive mask. Rank-2 operands (one batch and head) are the axiom
// language's form: (ort_gqa ?scale ?q ?k ?v) and (ort_gqa_past ?scale ?q ?k ?v ?pk ?pv), whose
// axioms (specs/operators.axioms) state the step of one query: attention over the cache.
#include <cmath>

#include "ops/families.h"
#include "ops/float_params.h"
#include "ops/kernel_util.h"

namespace graphsub {
namespace {

struct GqaShapes {
  int64_t batch = 1, seq = 0, past = 0, heads = 1, kv_heads = 1, head = 0;
  bool matrix = false;  // rank 2: the axiom language's one batch and head
  int64_t total() const { return past + seq; }
  Shape q4() const { return {batch, heads, seq, head}; }
  Shape new_kv4() const { return {batch, kv_heads, seq, head}; }
  Shape past4() const { return {batch, kv_heads, past, head}; }
  Shape present4() const { return {batch, kv_heads, total(), head}; }
};

GqaShapes gqa_shapes(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& q = in[0];
  auto bad = [&](const std::string& what) {
    return Error(fmt::format("group query attention: {} (Q {}, K {}, V {})", what,
                             shape_str(q.shape), shape_str(in[1].shape), shape_str(in[2].shape)));
  };
  if (in.size() == 4) throw bad("past key and past value come together");
  GqaShapes s;
  s.heads = a.i("num_heads");
  s.kv_heads = a.i("kv_num_heads");
  if (s.heads < 1 || s.kv_heads < 1 || s.heads % s.kv_heads != 0)
    throw bad(
        fmt::format("num_heads {} is not a multiple of kv_num_heads {}", s.heads, s.kv_heads));
  if (q.rank() == 2) {
    if (s.heads != 1 || s.kv_heads != 1) throw bad("rank-2 operands are one head");
    s.matrix = true;
    s.seq = q.shape[0];
    s.head = q.shape[1];
    if (in[1].shape != q.shape || in[2].shape != q.shape)
      throw bad("K and V must have Q's shape [sequence, head size]");
  } else if (q.rank() == 3) {
    s.batch = q.shape[0];
    s.seq = q.shape[1];
    if (q.shape[2] % s.heads != 0) throw bad(fmt::format("{} heads do not divide Q", s.heads));
    s.head = q.shape[2] / s.heads;
    Shape kv{s.batch, s.seq, s.kv_heads * s.head};
    if (in[1].shape != kv || in[2].shape != kv)
      throw bad(fmt::format("K and V must be {}", shape_str(kv)));
    // ONNX Runtime's CPU kernel refuses these at run time.
    if (s.head % 8 != 0)
      throw bad(fmt::format("head size {} is not a multiple of 8 (ONNX Runtime's kernel)", s.head));
  } else {
    throw bad("Q must be [batch, sequence, heads * head size]");
  }
  if (in.size() == 5) {
    const Shape& pk = in[3].shape;
    Shape want = s.matrix ? Shape{pk.empty() ? 0 : pk[0], s.head}
                          : Shape{s.batch, s.kv_heads, pk.size() == 4 ? pk[2] : 0, s.head};
    s.past = s.matrix ? want[0] : want[2];
    if (pk != want || in[4].shape != want || s.past < 1)
      throw bad(fmt::format("past key {} and value {} must be {} with a past of at least 1",
                            shape_str(pk), shape_str(in[4].shape),
                            s.matrix ? "[past, head size]" : "[batch, kv heads, past, head size]"));
    if (!s.matrix && s.batch > 1 && s.seq > 1)
      throw bad("several batches of several tokens after a past (ONNX Runtime's kernel)");
  }
  // The lengths of the form without padding.
  std::vector<int64_t> lens = a.ints("seqlens_k");
  std::vector<int64_t> total = a.ints("total_sequence_length");
  if (lens != std::vector<int64_t>(static_cast<size_t>(s.batch), s.total() - 1))
    throw bad(
        fmt::format("seqlens_k {} are not {} for each of {} batches (padded batches are "
                    "not read)",
                    shape_str(lens), s.total() - 1, s.batch));
  if (total != std::vector<int64_t>{s.total()})
    throw bad(fmt::format("total_sequence_length {} is not the past and new tokens, {}",
                          shape_str(total), s.total()));
  if (a.i("local_window_size") == 0 || a.i("local_window_size") < -1)
    throw bad(fmt::format("local_window_size {} (-1 or positive)", a.i("local_window_size")));
  if (a.f("softcap") != 0.0)
    throw bad(fmt::format("softcap {} (graphsub reads 0)", a.f("softcap")));
  return s;
}

std::vector<TensorType> infer_gqa(const Attrs& a, std::span<const TensorType> in) {
  GqaShapes s = gqa_shapes(a, in);
  TensorType y = derived_type(in[0], in[0].shape);
  if (!s.matrix) {
    TensorType p = derived_type(in[0], s.present4());
    return {y, p, p};
  }
  // The language's present key and value are the new ones, or concat's of the past and them
  // (with the cut concat records), as the axioms state.
  if (in.size() < 5) return {y, in[1], in[2]};
  const OpDef& concat = op_def("concat");
  Attrs rows{{"axis", int64_t{0}}};
  std::vector<TensorType> key{in[3], in[1]}, value{in[4], in[2]};
  return {y, concat.infer(rows, key).at(0), concat.infer(rows, value).at(0)};
}

double gqa_scale(const Attrs& a, const GqaShapes& s) {
  double scale = a.f("scale");
  return scale != 0 ? scale : 1.0 / std::sqrt(static_cast<double>(s.head));
}

// The additive mask [S, P + S] of query i at position P + i (none where nothing is masked).
template <class T>
std::vector<T> causal_window_mask(const GqaShapes& s, int64_t window) {
  std::vector<T> mask(static_cast<size_t>(s.seq * s.total()), T{0});
  bool any = false;
  for (int64_t i = 0; i < s.seq; ++i)
    for (int64_t j = 0; j < s.total(); ++j) {
      int64_t at = s.past + i;
      if (j > at || (window > 0 && j <= at - window)) {
        mask[static_cast<size_t>(i * s.total() + j)] = Scalar<T>::lowest();
        any = true;
      }
    }
  if (!any) mask.clear();
  return mask;
}

template <class T>
void kernel_gqa(const KernelIO<T>& io) {
  GqaShapes s = gqa_shapes(io.attrs, io.in_types);
  auto typed = [&](Shape sh) { return derived_type(io.in_types[0], std::move(sh)); };
  const std::vector<int64_t> swap{0, 2, 1, 3};  // [B, S, heads, H] <-> [B, heads, S, H]
  // Q, K and V with their heads out of the last axis (the same memory as [B, S, heads, H]).
  auto heads_out = [&](const T* data, int64_t heads) {
    TensorType to = typed({s.batch, heads, s.seq, s.head});
    std::vector<T> buf = buffer<T>(to);
    run_primitive<T>("transpose", {{"perm", swap}}, {typed({s.batch, s.seq, heads, s.head})},
                     {data}, to, buf.data());
    return buf;
  };
  std::vector<T> q = heads_out(io.in[0], s.heads);
  std::vector<T> k = heads_out(io.in[1], s.kv_heads);
  std::vector<T> v = heads_out(io.in[2], s.kv_heads);
  // The present cache: the past with the new keys and values appended.
  TensorType present = typed(s.present4());
  const T* present_k = k.data();
  const T* present_v = v.data();
  if (s.past > 0) {
    for (size_t i = 0; i < 2; ++i)
      run_primitive<T>("concat", {{"axis", int64_t{2}}}, {typed(s.past4()), typed(s.new_kv4())},
                       {io.in[3 + i], i == 0 ? k.data() : v.data()}, present, io.out[1 + i]);
    present_k = io.out[1];
    present_v = io.out[2];
  } else {
    std::copy(k.begin(), k.end(), io.out[1]);
    std::copy(v.begin(), v.end(), io.out[2]);
  }
  std::vector<TensorType> types{typed(s.q4()), present, present};
  std::vector<const T*> data{q.data(), present_k, present_v};
  std::vector<T> mask = causal_window_mask<T>(s, io.attrs.i("local_window_size"));
  if (!mask.empty()) {
    types.push_back(typed({s.seq, s.total()}));
    data.push_back(mask.data());
  }
  TensorType y4 = typed({s.batch, s.heads, s.seq, s.head});
  std::vector<T> y = buffer<T>(y4);
  Attrs attention{{"scale", gqa_scale(io.attrs, s)},
                  {"is_causal", int64_t{0}},
                  {"q_num_heads", int64_t{0}},
                  {"kv_num_heads", int64_t{0}}};
  run_primitive<T>("attention", attention, types, data, y4, y.data());
  run_primitive<T>("transpose", {{"perm", swap}}, {y4}, {y.data()},
                   typed({s.batch, s.seq, s.heads, s.head}), io.out[0]);
}

OpCost cost_gqa(const Attrs& a, std::span<const TensorType> in, std::span<const TensorType> out) {
  GqaShapes s = gqa_shapes(a, in);
  OpCost c = streaming_cost(in, out, 0);
  double scores = static_cast<double>(s.batch * s.heads * s.seq * s.total());
  c.flops = scores * (4.0 * static_cast<double>(s.head) + 5.0);
  return c;
}

// (ort_gqa ?scale ...): one batch and head, no window, the scale spelled exactly; the lengths
// follow from the shapes.
Attrs gqa_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType> in) {
  if (p.size() != 1) throw Error("ort_gqa: expected one parameter (the scale)");
  if (in.empty() || in[0].rank() != 2) throw Error("ort_gqa: the language's operands are matrices");
  int64_t total = in[0].shape[0] + (in.size() > 3 && in[3].rank() == 2 ? in[3].shape[0] : 0);
  return {{"num_heads", int64_t{1}},
          {"kv_num_heads", int64_t{1}},
          {"scale", static_cast<double>(param_float("ort_gqa", p[0]))},
          {"local_window_size", int64_t{-1}},
          {"softcap", 0.0},
          {"seqlens_k", std::vector<int64_t>{total - 1}},
          {"total_sequence_length", std::vector<int64_t>{total}}};
}

std::optional<std::vector<AxiomParam>> gqa_attrs_to_params(const Attrs& a,
                                                           std::span<const TensorType> in) {
  if (in[0].rank() != 2 || a.i("local_window_size") != -1 || a.f("scale") == 0) return std::nullopt;
  auto scale = floats_param({static_cast<float>(a.f("scale"))});
  if (!scale) return std::nullopt;
  return std::vector<AxiomParam>{*scale};
}

}  // namespace

void register_ort_gqa_ops(std::vector<OpDef>& defs) {
  defs.push_back({.name = "ort_gqa",
                  .axiom_name = "ort_gqa",
                  .min_inputs = 3,
                  .max_inputs = 5,
                  .attrs = {required_attr("num_heads", AttrKind::Int),
                            required_attr("kv_num_heads", AttrKind::Int), float_attr("scale", 0.0),
                            int_attr("local_window_size", -1), float_attr("softcap", 0.0),
                            ints_attr("seqlens_k"), ints_attr("total_sequence_length")},
                  .infer = infer_gqa,
                  .kernel_f32 = kernel_gqa<float>,
                  .kernel_u32 = kernel_gqa<uint32_t>,
                  .cost = cost_gqa,
                  .standin = true,
                  .runtime = "onnxruntime",
                  .axiom_params = {"scale"},
                  .params_to_attrs = gqa_params_to_attrs,
                  .attrs_to_params = gqa_attrs_to_params,
                  .axiom_outputs = {"ort_gqa", "ort_gqa_present_key", "ort_gqa_present_value"},
                  .axiom_forms = {{"ort_gqa_past", 5}}});
}

}  // namespace graphsub
