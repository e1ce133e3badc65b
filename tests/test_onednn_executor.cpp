// The fast (oneDNN) executor against the reference executor: every registered operator on
// seeded random shapes and attributes, then whole models, primitive reuse across runs,
// per-node timing, constant folding and the error cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <set>

#include "core/error.h"
#include "exec/reference_executor.h"
#include "exec_onednn/onednn_executor.h"
#include "ir/builder.h"
#include "models/models.h"
#include "ops/op_def.h"

namespace graphsub {
namespace {

using Rng = std::mt19937_64;
using Ints = std::vector<int64_t>;

int64_t pick(Rng& r, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(r);
}
bool coin(Rng& r) {
  return pick(r, 0, 1) == 1;
}
template <class T>
const T& one_of(Rng& r, const std::vector<T>& v) {
  return v[static_cast<size_t>(pick(r, 0, static_cast<int64_t>(v.size()) - 1))];
}
Shape random_shape(Rng& r, int64_t min_rank, int64_t max_rank, int64_t max_dim = 5) {
  Shape s(static_cast<size_t>(pick(r, min_rank, max_rank)));
  for (auto& d : s) d = pick(r, 1, max_dim);
  return s;
}
std::string random_act(Rng& r) {
  return one_of<std::string>(
      r, {"none", "relu", "sigmoid", "tanh", "relu6", "hardswish", "silu", "gelu"});
}

// A weight known by shape only: its value comes from the feeds at run time.
TensorRef fed_weight(GraphBuilder& b, const std::string& name, Shape s) {
  TensorType t;
  t.shape = std::move(s);
  return {b.graph().add_weight(name, std::move(t)), 0};
}
// A weight either baked in (with data) or fed, at random.
TensorRef some_weight(Rng& r, GraphBuilder& b, const std::string& name, Shape s) {
  return coin(r) ? b.weight(name, std::move(s)) : fed_weight(b, name, std::move(s));
}

// One test instance: a graph and, for operators with a restricted domain, a fix-up of the
// random feeds (e.g. non-negative operands of sqrt).
struct Case {
  Graph graph;
  std::function<void(TensorMap<float>&)> adjust;
};
using CaseFn = std::function<Case(Rng&)>;

Case single(GraphBuilder& b, TensorRef out) {
  b.output("y", out);
  return {b.finish(), nullptr};
}

// Feeds for graph inputs and for weights without data.
TensorMap<float> feeds_for(const Graph& g, uint64_t seed) {
  TensorMap<float> feeds = random_feeds(g, seed, true);
  for (NodeId w : g.weights())
    if (g.node(w).data) feeds.erase(g.node(w).name);
  return feeds;
}

// Within the check's tolerance (exec/host_tensor.h).
void expect_close(const std::vector<HostTensor<float>>& fast,
                  const std::vector<HostTensor<float>>& ref, const std::string& what) {
  ASSERT_EQ(fast.size(), ref.size()) << what;
  for (size_t i = 0; i < ref.size(); ++i) {
    Difference d = compare(fast[i], ref[i], Tolerance{});
    EXPECT_TRUE(d.ok) << what << "\noutput " << i << " shape " << shape_str(ref[i].shape) << " vs "
                      << shape_str(fast[i].shape) << ": max abs diff " << d.max_abs
                      << ", max rel diff " << d.max_rel;
  }
}

std::string plan_of(const OnednnExecutor& ex, const std::string& op) {
  std::string s;
  for (auto& p : ex.plan())
    if (p.op == op) s += p.how + "; ";
  return s;
}

// ---------------------------------------------------------------- cases, one per operator

Case unary_case(Rng& r, const std::string& op) {
  GraphBuilder b(true, r());
  auto x = b.input("x", random_shape(r, 0, 4));
  Case c = single(b, b.op(op, {x}));
  if (op == "sqrt")
    c.adjust = [](TensorMap<float>& f) {
      for (auto& v : f["x"].data) v = std::fabs(v);
    };
  return c;
}

Case same_shape_case(Rng& r, const std::string& op) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 4);
  return single(b, b.op(op, {b.input("a", s), b.input("b", s)}));
}

// A shape that broadcasts to `full`: fewer leading axes and/or some axes of size 1.
Shape broadcast_operand(Rng& r, const Shape& full) {
  Shape s(full.begin() + pick(r, 0, static_cast<int64_t>(full.size()) - 1), full.end());
  for (auto& d : s)
    if (coin(r)) d = 1;
  return s;
}

Case broadcast_case(Rng& r, const std::string& op) {
  GraphBuilder b(true, r());
  Shape full = random_shape(r, 1, 4, 4);
  int64_t mode = pick(r, 0, 3);  // a full, b full, both broadcast, equal shapes
  Shape as = mode == 0 || mode == 3 ? full : broadcast_operand(r, full);
  Shape bs = mode == 1 || mode == 3 ? full : broadcast_operand(r, full);
  Case c = single(b, b.op(op, {b.input("a", as), b.input("b", bs)}));
  if (op == "div")  // keep denominators away from zero
    c.adjust = [](TensorMap<float>& f) {
      for (auto& v : f["b"].data) v = std::copysign(0.5f + std::fabs(v), v);
    };
  return c;
}

Case smul_case(Rng& r) {
  GraphBuilder b(true, r());
  auto x = b.input("x", random_shape(r, 0, 4));
  return single(b, b.op("smul", {x, b.input("s", {})}));
}

Case matmul_case(Rng& r) {
  GraphBuilder b(true, r());
  int64_t rank = pick(r, 2, 4), m = pick(r, 1, 9), k = pick(r, 1, 17), n = pick(r, 1, 13);
  Shape batch = random_shape(r, rank - 2, rank - 2, 3);
  Shape as = batch, bs = coin(r) ? batch : Shape{};
  as.insert(as.end(), {m, k});
  bs.insert(bs.end(), {k, n});
  std::vector<TensorRef> ins{b.input("a", as), some_weight(r, b, "b", bs)};
  if (coin(r)) ins.push_back(some_weight(r, b, "bias", {n}));
  return single(b, b.op("matmul", ins, {{"act", random_act(r)}}));
}

Case transpose_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 5, 4);
  Ints perm(s.size());
  std::iota(perm.begin(), perm.end(), 0);
  if (coin(r))
    std::shuffle(perm.begin(), perm.end(), r);
  else
    perm.clear();  // reverse
  return single(b, b.transpose(b.input("x", s), perm));
}

// A random conv's operands and attributes: plain, grouped or depth-wise, maybe with a bias.
struct RandomConv {
  std::vector<TensorRef> ins;
  Attrs attrs;
};
RandomConv random_conv(Rng& r, GraphBuilder& b) {
  int64_t kind = pick(r, 0, 2);  // plain, grouped, depth-wise
  int64_t groups = kind == 0 ? 1 : kind == 1 ? pick(r, 2, 3) : pick(r, 2, 6);
  int64_t cg = kind == 2 ? 1 : pick(r, 1, 4), og = kind == 2 ? pick(r, 1, 2) : pick(r, 1, 4);
  int64_t kh = pick(r, 1, 3), kw = pick(r, 1, 3), dh = pick(r, 1, 2), dw = pick(r, 1, 2);
  int64_t h = dh * (kh - 1) + pick(r, 1, 8), w = dw * (kw - 1) + pick(r, 1, 8);
  auto x = b.input("x", {pick(r, 1, 2), groups * cg, h, w});
  std::vector<TensorRef> ins{x, some_weight(r, b, "w", {groups * og, cg, kh, kw})};
  if (coin(r)) ins.push_back(some_weight(r, b, "bias", {groups * og}));
  Attrs a{{"stride", Ints{pick(r, 1, 2), pick(r, 1, 2)}},
          {"pads", Ints{pick(r, 0, 2), pick(r, 0, 2), pick(r, 0, 2), pick(r, 0, 2)}},
          {"dilations", Ints{dh, dw}},
          {"act", random_act(r)}};
  return {ins, a};
}

Case conv_case(Rng& r) {
  GraphBuilder b(true, r());
  auto c = random_conv(r, b);
  return single(b, b.op("conv", c.ins, c.attrs));
}

// The residual is a graph input, or computed (and then maybe also a graph output, which the
// executor must not write into).
Case conv_add_case(Rng& r) {
  GraphBuilder b(true, r());
  auto c = random_conv(r, b);
  std::vector<TensorType> types;
  for (size_t i = 0; i < 2; ++i) types.push_back(b.graph().type(c.ins[i]));
  Shape out = op_def("conv").infer(c.attrs, types).at(0).shape;
  TensorRef residual = b.input("r", out);
  int64_t kind = pick(r, 0, 2);
  if (kind > 0) residual = b.tanh(residual);
  if (kind == 2) b.output("residual", residual);
  c.ins.insert(c.ins.begin() + 2, residual);
  return single(b, b.op("conv_add", c.ins, c.attrs));
}

Case enlarge_case(Rng& r) {
  GraphBuilder b(true, r());
  int64_t kh = one_of<int64_t>(r, {1, 3}), kw = one_of<int64_t>(r, {1, 3});
  auto w = some_weight(r, b, "w", {pick(r, 1, 3), pick(r, 1, 3), kh, kw});
  return single(
      b, b.op("enlarge", {w}, {{"kernel", Ints{kh + 2 * pick(r, 0, 2), kw + 2 * pick(r, 0, 2)}}}));
}

Case pool_case(Rng& r, const std::string& op) {
  GraphBuilder b(true, r());
  int64_t kh = pick(r, 1, 3), kw = pick(r, 1, 3);
  auto x = b.input("x", {pick(r, 1, 2), pick(r, 1, 5), kh + pick(r, 0, 6), kw + pick(r, 0, 6)});
  Attrs a{{"kernel", Ints{kh, kw}},
          {"stride", Ints{pick(r, 1, 3), pick(r, 1, 3)}},
          // Pads below the kernel size: every window holds at least one real element.
          {"pads",
           Ints{pick(r, 0, kh - 1), pick(r, 0, kw - 1), pick(r, 0, kh - 1), pick(r, 0, kw - 1)}}};
  if (op == "poolavg") a.set("count_include_pad", pick(r, 0, 1));
  return single(b, b.op(op, {x}, a));
}

Case global_avgpool_case(Rng& r) {
  GraphBuilder b(true, r());
  auto x = b.input("x", {pick(r, 1, 2), pick(r, 1, 9), pick(r, 1, 9), pick(r, 1, 9)});
  return single(b, b.op("global_avgpool", {x}));
}

Case concat_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 4, 4);
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = pick(r, -rank, rank - 1);
  std::vector<TensorRef> xs;
  for (int64_t i = 0, n = pick(r, 1, 3); i < n; ++i) {
    s[static_cast<size_t>((axis + rank) % rank)] = pick(r, 1, 4);
    xs.push_back(b.input("x" + std::to_string(i), s));
  }
  return single(b, b.concat(axis, xs));
}

Case split_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 4, 4);
  int64_t rank = static_cast<int64_t>(s.size());
  size_t axis = static_cast<size_t>(pick(r, 0, rank - 1));
  std::vector<TensorRef> parts;
  if (coin(r)) {  // explicit sizes
    s[axis] = pick(r, 2, 7);
    Ints sizes;
    for (int64_t left = s[axis]; left > 0;) {
      int64_t n = pick(r, 1, left);
      sizes.push_back(n);
      left -= n;
    }
    parts = b.op_multi("split", {b.input("x", s)},
                       {{"axis", static_cast<int64_t>(axis)}, {"sizes", sizes}});
  } else {  // cut where a concat joined its parts
    Shape s2 = s;
    s2[axis] = pick(r, 1, 4);
    auto joined = b.concat(static_cast<int64_t>(axis), {b.input("x", s), b.input("y", s2)});
    parts = b.op_multi("split", {joined}, {{"axis", static_cast<int64_t>(axis) - rank}});
  }
  for (size_t i = 0; i < parts.size(); ++i) b.output("part" + std::to_string(i), parts[i]);
  return {b.finish(), nullptr};
}

Case reshape_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 4, 4);
  // Regroup neighbouring axes, then write one of them as -1 and maybe the first as 0.
  Ints target;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!target.empty() && coin(r))
      target.back() *= s[i];
    else
      target.push_back(s[i]);
  }
  if (coin(r))
    target[static_cast<size_t>(pick(r, 0, static_cast<int64_t>(target.size()) - 1))] = -1;
  if (target[0] == s[0] && coin(r)) target[0] = 0;
  return single(b, b.reshape(b.input("x", s), target));
}

Case flatten_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 4, 4);
  return single(b, b.op("flatten", {b.input("x", s)},
                        {{"axis", pick(r, 0, static_cast<int64_t>(s.size()))}}));
}

Case pad_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 4, 4);
  Ints pads(2 * s.size());
  for (auto& p : pads) p = pick(r, 0, 2);
  return single(b,
                b.op("pad", {b.input("x", s)}, {{"pads", pads}, {"value", pick(r, -2, 2) * 0.5}}));
}

Case slice_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 3, 6);
  Ints starts, ends, axes, steps;
  for (size_t a = 0; a < s.size(); ++a) {
    if (!coin(r)) continue;
    int64_t d = s[a], lo = pick(r, 0, d - 1), hi = pick(r, lo + 1, d);
    int64_t step = pick(r, 1, 2);
    axes.push_back(coin(r) ? static_cast<int64_t>(a)
                           : static_cast<int64_t>(a) - static_cast<int64_t>(s.size()));
    if (coin(r)) {  // forwards; ends past the end are clamped
      starts.push_back(coin(r) ? lo : lo - d);
      ends.push_back(hi == d && coin(r) ? d + 5 : hi);
      steps.push_back(step);
    } else {  // backwards from hi-1 down to lo
      starts.push_back(hi - 1);
      ends.push_back(lo == 0 ? -d - 5 : lo - 1);
      steps.push_back(-step);
    }
  }
  if (axes.empty()) {
    axes = {0};
    starts = {0};
    ends = {s[0]};
    steps = {1};
  }
  return single(b, b.op("slice", {b.input("x", s)},
                        {{"starts", starts}, {"ends", ends}, {"axes", axes}, {"steps", steps}}));
}

Case batchnorm_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 2, 4, 5);
  return single(b, b.batchnorm(b.input("x", s), "bn"));
}

Case softmax_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 4, 6);
  int64_t rank = static_cast<int64_t>(s.size());
  return single(b, b.softmax(b.input("x", s), pick(r, -rank, rank - 1)));
}

// layernorm (scale, optional bias) and rms_norm (scale) over the axes from a random axis.
Case norm_case(Rng& r, const std::string& op) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 4, 6);
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = pick(r, -rank, rank - 1);
  Shape trailing(s.begin() + (axis + rank) % rank, s.end());
  std::vector<TensorRef> ins{b.input("x", s), some_weight(r, b, "scale", trailing)};
  if (op == "layernorm" && coin(r)) ins.push_back(some_weight(r, b, "bias", trailing));
  return single(b, b.op(op, ins, {{"axis", axis}, {"epsilon", 1e-3}}));
}

// The runtimes' fused operators (src/ops/fused_ops.cpp): normalizations and bias activations
// over the last axis, a scaled and transposed matmul. They run their reference kernels in
// the executor.
Case fused_case(Rng& r, const std::string& op) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 2, 4, 6);
  Shape last{s.back()};
  auto x = b.input("x", s);
  if (op == "ort_bias_gelu" || op == "ort_fast_gelu")
    return single(b, b.op(op, {x, some_weight(r, b, "bias", last)}));
  if (op == "ort_quick_gelu") return single(b, b.op(op, {x}, {{"alpha", 1.702}}));
  if (op == "ort_simplified_layernorm")
    return single(b, b.op(op, {x, some_weight(r, b, "g", last)}, {{"epsilon", 1e-3}}));
  if (op == "ort_fused_matmul") {
    int64_t m = pick(r, 1, 6), k = pick(r, 1, 9), n = pick(r, 1, 7);
    int64_t ta = coin(r), tb = coin(r);
    Shape as = ta ? Shape{2, k, m} : Shape{2, m, k}, bs = tb ? Shape{2, n, k} : Shape{2, k, n};
    return single(b, b.op(op, {b.input("a", as), b.input("b", bs)},
                          {{"alpha", 0.25}, {"transA", ta}, {"transB", tb}}));
  }
  // The skip normalizations: both outputs are graph outputs.
  std::vector<TensorRef> ins{x, b.input("skip", s), some_weight(r, b, "g", last)};
  int extra = static_cast<int>(pick(r, 0, op == "ort_skip_layernorm" ? 2 : 1));
  for (int i = 0; i < extra; ++i) ins.push_back(some_weight(r, b, "v" + std::to_string(i), last));
  auto outs = b.op_multi(op, ins, {{"epsilon", 1e-3}});
  b.output("y", outs[0]);
  b.output("sum", outs[1]);
  return {b.finish(), nullptr};
}

// Attention (ONNX's, src/ops/attention_ops.cpp) and ONNX Runtime's MultiHeadAttention: heads
// packed or not, grouped-query heads, a broadcast mask, causal; they run their reference
// kernels in the executor.
Case attention_case(Rng& r, const std::string& op) {
  GraphBuilder b(true, r());
  int64_t batch = pick(r, 1, 2), kv_heads = pick(r, 1, 2), group = pick(r, 1, 3);
  int64_t heads = kv_heads * group, s = pick(r, 1, 5), l = pick(r, 1, 6), d = pick(r, 1, 4);
  if (op == "ort_attention") {
    int64_t width = heads * d, in = pick(r, 1, 6);
    std::vector<TensorRef> ins{b.input("x", {batch, s, in}),
                               some_weight(r, b, "w", {in, 3 * width})};
    if (coin(r)) ins.push_back(some_weight(r, b, "bias", {3 * width}));
    return single(b, b.op(op, ins, {{"num_heads", heads}, {"unidirectional", coin(r)}}));
  }
  if (op == "ort_mha") {
    Shape q{batch, s, heads * d}, kv{batch, l, heads * d};
    std::vector<TensorRef> ins{b.input("q", q), b.input("k", kv), b.input("v", kv)};
    if (coin(r)) ins.push_back(some_weight(r, b, "bias", {3 * heads * d}));
    return single(b, b.op(op, ins, {{"num_heads", heads}, {"unidirectional", coin(r)}}));
  }
  Attrs a{{"scale", 0.5}, {"is_causal", coin(r)}};
  std::vector<TensorRef> ins;
  if (coin(r)) {  // [batch, sequence, heads * head size]
    a.set("q_num_heads", heads);
    a.set("kv_num_heads", kv_heads);
    ins = {b.input("q", {batch, s, heads * d}), b.input("k", {batch, l, kv_heads * d}),
           b.input("v", {batch, l, kv_heads * d})};
  } else {
    ins = {b.input("q", {batch, heads, s, d}), b.input("k", {batch, kv_heads, l, d}),
           b.input("v", {batch, kv_heads, l, d})};
  }
  if (coin(r)) ins.push_back(b.input("mask", {s, l}));
  return single(b, b.op(op, ins, a));
}

// Rotary embedding (ONNX's, src/ops/rotary_ops.cpp): heads packed or not, halves or
// interleaved pairs, a partial rotary dimension, angles per position or caches read at ids.
Case rotary_case(Rng& r, const std::string& op) {
  GraphBuilder b(true, r());
  bool ort = op == "ort_rotary_embedding";  // ONNX Runtime's: ids always, one id an offset
  int64_t batch = pick(r, 1, 2), heads = pick(r, 1, 3), seq = pick(r, 1, 5);
  int64_t head = 2 * pick(r, 1, 4), rotary = coin(r) ? head : 2 * pick(r, 1, head / 2);
  Attrs a{{"interleaved", coin(r)}, {"rotary_embedding_dim", rotary == head ? 0 : rotary}};
  Shape x{batch, heads, seq, head};
  if (coin(r)) {
    x = {batch, seq, heads * head};
    a.set("num_heads", heads);
  }
  Shape angles{batch, seq, rotary / 2};
  if (ort || coin(r)) {  // caches of a few more positions, read at ids
    int64_t positions = seq + pick(r, 0, 3);
    Ints ids;
    if (ort && coin(r))
      ids.push_back(positions - seq);
    else
      for (int64_t i = 0; i < batch * seq; ++i) ids.push_back(pick(r, 0, positions - 1));
    a.set("position_ids", ids);
    angles = {positions, rotary / 2};
  }
  return single(b, b.op(op, {b.input("x", x), b.input("cos", angles), b.input("sin", angles)}, a));
}

// ONNX Runtime's GroupQueryAttention: a prompt or a step after a past, grouped heads, a
// window or none; the output and both present caches are graph outputs.
Case gqa_case(Rng& r) {
  GraphBuilder b(true, r());
  int64_t kv_heads = pick(r, 1, 2), heads = kv_heads * pick(r, 1, 3), head = 8 * pick(r, 1, 2);
  int64_t past = coin(r) ? pick(r, 1, 4) : 0;
  int64_t batch = pick(r, 1, 2), seq = past > 0 && batch > 1 ? 1 : pick(r, 1, 4);
  int64_t total = past + seq;
  Attrs a{{"num_heads", heads},
          {"kv_num_heads", kv_heads},
          {"local_window_size", coin(r) ? int64_t{-1} : pick(r, 1, total)},
          {"seqlens_k", Ints(static_cast<size_t>(batch), total - 1)},
          {"total_sequence_length", Ints{total}}};
  if (coin(r)) a.set("scale", 0.25);
  Shape kv{batch, seq, kv_heads * head};
  std::vector<TensorRef> ins{b.input("q", {batch, seq, heads * head}), b.input("k", kv),
                             b.input("v", kv)};
  if (past > 0) {
    ins.push_back(b.input("pk", {batch, kv_heads, past, head}));
    ins.push_back(b.input("pv", {batch, kv_heads, past, head}));
  }
  auto outs = b.op_multi("ort_gqa", ins, a);
  b.output("y", outs[0]);
  b.output("present_key", outs[1]);
  b.output("present_value", outs[2]);
  return {b.finish(), nullptr};
}

Case reduce_mean_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 4, 5);
  Ints axes;
  for (size_t a = 0; a < s.size(); ++a)
    if (coin(r))
      axes.push_back(coin(r) ? static_cast<int64_t>(a)
                             : static_cast<int64_t>(a) - static_cast<int64_t>(s.size()));
  return single(
      b, b.op("reduce_mean", {b.input("x", s)}, {{"axes", axes}, {"keepdims", pick(r, 0, 1)}}));
}

Case reduce_sum_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 4, 5);
  Ints axes;
  for (size_t a = 0; a < s.size(); ++a)
    if (coin(r)) axes.push_back(static_cast<int64_t>(a));
  return single(
      b, b.op("reduce_sum", {b.input("x", s)}, {{"axes", axes}, {"keepdims", pick(r, 0, 1)}}));
}

// The element-wise operators with attributes, on inputs scaled to reach their kinks.
Case param_unary_case(Rng& r, const std::string& op) {
  GraphBuilder b(true, r());
  auto x = b.input("x", random_shape(r, 0, 4));
  Attrs a;
  double u = static_cast<double>(pick(r, 1, 9)) / 10;
  if (op == "clip") a = {{"min", -u}, {"max", u / 2}};
  if (op == "hardsigmoid") a = {{"alpha", 1.0 + u}, {"beta", u}};
  if (op == "leaky_relu") a = {{"alpha", u}};
  if (op == "pow") a = {{"exponent", one_of<double>(r, {2.0, 3.0, 0.5, 1.5})}};
  Case c = single(b, b.op(op, {x}, a));
  if (op == "pow")  // real powers of non-negative bases only
    c.adjust = [](TensorMap<float>& f) {
      for (auto& v : f["x"].data) v = std::fabs(v);
    };
  return c;
}

Case prelu_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 4, 4);
  return single(
      b, b.op("prelu", {b.input("x", s), some_weight(r, b, "slope", broadcast_operand(r, s))}));
}

Case expand_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape full = random_shape(r, 1, 4, 4);
  Shape s = broadcast_operand(r, full);
  return single(b, b.op("expand", {b.input("x", s)}, {{"shape", Ints(full.begin(), full.end())}}));
}

Case gather_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s = random_shape(r, 1, 4, 5);
  int64_t axis = pick(r, 0, static_cast<int64_t>(s.size()) - 1);
  Ints idx(static_cast<size_t>(pick(r, 1, 4)));
  for (auto& i : idx) i = pick(r, -s[static_cast<size_t>(axis)], s[static_cast<size_t>(axis)] - 1);
  return single(b, b.op("gather", {b.input("x", s)},
                        {{"axis", axis},
                         {"indices", idx},
                         {"indices_shape", Ints{static_cast<int64_t>(idx.size())}}}));
}

Case resize_case(Rng& r) {
  GraphBuilder b(true, r());
  Shape s{pick(r, 1, 2), pick(r, 1, 3), pick(r, 1, 5), pick(r, 1, 5)};
  int64_t fh = pick(r, 1, 3), fw = pick(r, 1, 3);
  return single(b, b.op("resize", {b.input("x", s)},
                        {{"mode", one_of<std::string>(r, {"nearest", "linear"})},
                         {"coordinate_transformation_mode",
                          one_of<std::string>(r, {"half_pixel", "asymmetric", "align_corners"})},
                         {"sizes", Ints{s[2] * fh, s[3] * fw}},
                         {"scale_h", static_cast<double>(fh)},
                         {"scale_w", static_cast<double>(fw)}}));
}

Case const_case(Rng& r, const std::string& op) {
  GraphBuilder b(true, r());
  Attrs a;
  if (op == "const_pool" || op == "const_iconv") {
    int64_t k = op == "const_iconv" ? one_of<int64_t>(r, {1, 3, 5}) : pick(r, 1, 4);
    a = {{"channels", pick(r, 1, 4)}, {"kernel", Ints{k, op == "const_iconv" ? k : pick(r, 1, 4)}}};
  } else if (op == "const_imatmul") {
    a = {{"n", pick(r, 1, 6)}};
  } else {
    a = {{"shape", random_shape(r, 1, 3, 4)}};
  }
  // Used by a run-time operator as well as output directly.
  auto c = b.op(op, {}, a);
  const Shape& cs = b.shape(c);
  auto x = b.input("x", cs);
  b.output("c", c);
  b.output("sum", b.ewadd(c, x));
  return {b.finish(), nullptr};
}

const std::map<std::string, CaseFn>& cases() {
  static const std::map<std::string, CaseFn> m = [] {
    std::map<std::string, CaseFn> c;
    for (const char* op : {"relu", "sigmoid", "tanh", "gelu", "gelu_tanh", "erf", "exp", "sqrt",
                           "identity", "relu6", "hardswish", "silu", "neg", "nan_to_zero"})
      c[op] = [op](Rng& r) { return unary_case(r, op); };
    for (const char* op : {"ewadd", "ewmul"})
      c[op] = [op](Rng& r) { return same_shape_case(r, op); };
    for (const char* op : {"add", "sub", "mul", "div"})
      c[op] = [op](Rng& r) { return broadcast_case(r, op); };
    for (const char* op : {"poolavg", "poolmax"}) c[op] = [op](Rng& r) { return pool_case(r, op); };
    for (const char* op : {"const_pool", "const_iconv", "const_imatmul", "const_iewmul"})
      c[op] = [op](Rng& r) { return const_case(r, op); };
    c["smul"] = smul_case;
    c["matmul"] = matmul_case;
    c["transpose"] = transpose_case;
    c["conv"] = conv_case;
    c["conv_add"] = conv_add_case;
    c["enlarge"] = enlarge_case;
    c["global_avgpool"] = global_avgpool_case;
    c["concat"] = concat_case;
    c["split"] = split_case;
    c["reshape"] = reshape_case;
    c["flatten"] = flatten_case;
    c["pad"] = pad_case;
    c["slice"] = slice_case;
    c["batchnorm"] = batchnorm_case;
    c["softmax"] = softmax_case;
    for (const char* op : {"layernorm", "rms_norm"})
      c[op] = [op](Rng& r) { return norm_case(r, op); };
    for (const char* op :
         {"ort_bias_gelu", "ort_fast_gelu", "ort_quick_gelu", "ort_fused_matmul",
          "ort_skip_layernorm", "ort_skip_simplified_layernorm", "ort_simplified_layernorm"})
      c[op] = [op](Rng& r) { return fused_case(r, op); };
    for (const char* op : {"attention", "ort_mha", "ort_attention"})
      c[op] = [op](Rng& r) { return attention_case(r, op); };
    for (const char* op : {"rotary_embedding", "ort_rotary_embedding"})
      c[op] = [op](Rng& r) { return rotary_case(r, op); };
    c["ort_gqa"] = gqa_case;
    c["reduce_mean"] = reduce_mean_case;
    c["reduce_sum"] = reduce_sum_case;
    for (const char* op : {"clip", "hardsigmoid", "leaky_relu", "pow"})
      c[op] = [op](Rng& r) { return param_unary_case(r, op); };
    c["prelu"] = prelu_case;
    c["expand"] = expand_case;
    c["gather"] = gather_case;
    c["resize"] = resize_case;
    return c;
  }();
  return m;
}

// Operators the executor runs on oneDNN primitives (or as zero-copy views); the others run
// their reference kernel inside the executor.
const std::set<std::string> kOnednnOps = {
    "relu",      "sigmoid",   "tanh",           "gelu",       "exp",         "sqrt",
    "identity",  "ewadd",     "ewmul",          "add",        "sub",         "mul",
    "div",       "smul",      "matmul",         "transpose",  "conv",        "conv_add",
    "poolavg",   "poolmax",   "global_avgpool", "concat",     "split",       "reshape",
    "flatten",   "batchnorm", "softmax",        "layernorm",  "reduce_mean", "relu6",
    "hardswish", "silu",      "clip",           "leaky_relu", "pow",         "prelu",
    "reduce_sum"};

std::vector<std::string> executable_ops() {
  std::vector<std::string> ops;
  for (const OpDef* op : all_ops())
    if (op->name != "input" && op->name != "weight" && op->cls != OpClass::Opaque)
      ops.push_back(op->name);
  return ops;
}

class EveryOperator : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryOperator, AgreesWithReferenceOnRandomShapesAndAttributes) {
  const std::string& op = GetParam();
  auto it = cases().find(op);
  ASSERT_NE(it, cases().end()) << "no executor test case for operator '" << op << "'";
  Rng rng(std::hash<std::string>{}(op) ^ 0x0ddba11);
  int on_onednn = 0;
  const int instances = 12;
  for (int i = 0; i < instances; ++i) {
    Case c = it->second(rng);
    auto feeds = feeds_for(c.graph, static_cast<uint64_t>(i) + 1);
    if (c.adjust) c.adjust(feeds);
    std::string what = "operator " + op + ", instance " + std::to_string(i) + "\n" + [&] {
      std::string s;
      for (NodeId id : c.graph.topo_order())
        s += c.graph.describe(id) + " " + c.graph.node(id).attrs.str() + "\n";
      return s;
    }();
    auto ref = run_reference(c.graph, feeds);
    for (bool fold : {true, false}) {
      OnednnExecutor ex(c.graph, {.fold_constants = fold});
      std::string plan = plan_of(ex, op);
      expect_close(ex.run(feeds), ref, what + "plan: " + plan);
      if (plan.find("reference kernel") == std::string::npos) ++on_onednn;
    }
  }
  if (kOnednnOps.count(op))
    EXPECT_GT(on_onednn, 0) << op << " never ran on oneDNN";
  else
    EXPECT_EQ(on_onednn, 0) << op << " is expected to run its reference kernel";
}

INSTANTIATE_TEST_SUITE_P(OnednnExecutor, EveryOperator, ::testing::ValuesIn(executable_ops()),
                         [](const auto& info) { return info.param; });

// ---------------------------------------------------------------- whole graphs

// A bottleneck block with batchnorm, a projection shortcut, pooling and a classifier:
// blocked layouts flow from conv through batchnorm, relu, add and pooling.
Graph residual_block() {
  GraphBuilder b(true, 7);
  auto x = b.input("x", {1, 16, 12, 12});
  auto h = b.relu(b.batchnorm(b.conv(x, b.weight("c1", {8, 16, 1, 1})), "bn1"));
  h = b.conv(h, b.weight("c2", {8, 8, 3, 3}), {.stride = 2, .pad = 1, .act = "relu"});
  h = b.batchnorm(b.conv(h, b.weight("c3", {32, 8, 1, 1})), "bn3");
  auto proj = b.conv(x, b.weight("proj", {32, 16, 1, 1}), {.stride = 2});
  auto y = b.relu(b.ewadd(h, proj));
  auto pooled = b.op("global_avgpool", {b.poolavg(y, {.kernel = 3, .stride = 1, .pad = 1})});
  auto flat = b.op("flatten", {pooled}, {{"axis", 1}});
  auto logits = b.op("matmul", {flat, b.weight("fc", {32, 10}), b.weight("fc.b", {10})});
  b.output("probs", b.softmax(logits));
  b.output("features", y);
  return b.finish();
}

TEST(OnednnExecutor, DemoModelAgreesWithReference) {
  Graph g = demo_model();
  auto feeds = random_feeds(g, 3);
  OnednnExecutor ex(g);
  expect_close(ex.run(feeds), run_reference(g, feeds), "demo model");
  EXPECT_NE(plan_of(ex, "conv").find("convolution"), std::string::npos) << plan_of(ex, "conv");
}

TEST(OnednnExecutor, ResidualBlockAgreesWithReference) {
  Graph g = residual_block();
  auto feeds = random_feeds(g, 5);
  OnednnExecutor ex(g);
  expect_close(ex.run(feeds), run_reference(g, feeds), "residual block");
  for (auto& p : ex.plan())
    EXPECT_EQ(p.how.find("reference"), std::string::npos) << p.op << ": " << p.how;
}

// conv_add accumulates into its destination: it may take the residual's buffer only when
// nothing reads the residual (or a tensor sharing its bytes) afterwards. Each graph runs twice,
// against the reference, and the plan says which way it went.
TEST(OnednnExecutor, ConvAddWritesIntoTheResidualOnlyWhenNothingReadsItLater) {
  struct Variant {
    const char* name;
    bool in_place;
    std::function<void(GraphBuilder&, TensorRef x, TensorRef r)> build;
  };
  auto conv_add = [](GraphBuilder& b, TensorRef x, TensorRef r, const char* w) {
    return b.op("conv_add", {x, b.weight(w, {8, 8, 3, 3}), r},
                {{"pads", Ints{1, 1, 1, 1}}, {"act", std::string("relu")}});
  };
  const std::vector<Variant> variants = {
      {"only reader", true,
       [&](GraphBuilder& b, TensorRef x, TensorRef r) { b.output("y", conv_add(b, x, r, "w")); }},
      {"read before", true,
       [&](GraphBuilder& b, TensorRef, TensorRef r) {
         b.output("y", conv_add(b, b.conv(r, b.weight("v", {8, 8, 1, 1})), r, "w"));
       }},
      {"graph output", false,
       [&](GraphBuilder& b, TensorRef x, TensorRef r) {
         b.output("y", conv_add(b, x, r, "w"));
         b.output("r", r);
       }},
      {"read after", false,
       [&](GraphBuilder& b, TensorRef x, TensorRef r) {
         b.output("y", b.ewadd(conv_add(b, x, r, "w"), r));
       }},
      {"also the conv's input", false,
       [&](GraphBuilder& b, TensorRef, TensorRef r) { b.output("y", conv_add(b, r, r, "w")); }},
      {"a view read after", false,
       [&](GraphBuilder& b, TensorRef x, TensorRef r) {
         b.output("y", b.ewadd(conv_add(b, x, b.op("identity", {r}), "w"), r));
       }},
      {"chained", true,
       [&](GraphBuilder& b, TensorRef x, TensorRef r) {
         b.output("y", conv_add(b, x, conv_add(b, x, r, "w1"), "w2"));
       }},
  };
  for (auto& v : variants) {
    GraphBuilder b(true, 3);
    auto x = b.input("x", {1, 8, 9, 9});
    // A conv computes the residual, so that it arrives in conv_add's own layout (no
    // conversion gives conv_add a buffer of its own).
    auto r = b.conv(b.input("r", {1, 8, 9, 9}), b.weight("u", {8, 8, 1, 1}), {.act = "tanh"});
    v.build(b, x, r);
    Graph g = b.finish();
    OnednnExecutor ex(g);
    std::string plan = plan_of(ex, "conv_add");
    EXPECT_EQ(plan.find(v.in_place ? "on a copy" : "in place"), std::string::npos)
        << v.name << ": " << plan;
    for (uint64_t seed : {1, 2}) {
      auto feeds = random_feeds(g, seed);
      expect_close(ex.run(feeds), run_reference(g, feeds), std::string(v.name) + ": " + plan);
    }
  }
}

// Operators fed by a convolution's output, which oneDNN keeps in a blocked layout: each one
// either works in that layout or gets a reorder, and must agree with the reference.
// Scaled-down benchmark models: matmul chains with activations (NasRNN) and attention with
// reshapes, transposes, batched matmuls, softmax and layernorm (BERT).
TEST(OnednnExecutor, SmallBenchmarkModelsAgreeWithReference) {
  std::vector<std::pair<std::string, Graph>> models;
  models.emplace_back("nasrnn", nasrnn(true, 32, 2));
  models.emplace_back("bert",
                      bert(true, {.batch = 2, .seq = 8, .hidden = 32, .heads = 4, .layers = 2}));
  for (auto& [name, g] : models) {
    auto feeds = random_feeds(g, 6);
    OnednnExecutor ex(g);
    expect_close(ex.run(feeds), run_reference(g, feeds), name);
    for (auto& p : ex.plan())
      EXPECT_EQ(p.how.find("reference"), std::string::npos)
          << name << ": " << p.op << ": " << p.how;
  }
}

TEST(OnednnExecutor, OperatorsAgreeOnBlockedConvOutputs) {
  using Build = std::function<TensorRef(GraphBuilder&, TensorRef)>;
  const std::vector<std::pair<std::string, Build>> consumers = {
      {"relu", [](GraphBuilder& b, TensorRef t) { return b.relu(t); }},
      {"gelu", [](GraphBuilder& b, TensorRef t) { return b.op("gelu", {t}); }},
      {"erf", [](GraphBuilder& b, TensorRef t) { return b.op("erf", {t}); }},
      {"identity", [](GraphBuilder& b, TensorRef t) { return b.op("identity", {t}); }},
      {"ewadd plain",
       [](GraphBuilder& b, TensorRef t) { return b.ewadd(t, b.input("y", b.shape(t))); }},
      {"ewmul plain first",
       [](GraphBuilder& b, TensorRef t) { return b.ewmul(b.input("y", b.shape(t)), t); }},
      {"smul",
       [](GraphBuilder& b, TensorRef t) {
         return b.op("smul", {t, b.input("s", {})});
       }},
      {"add per-channel",
       [](GraphBuilder& b, TensorRef t) {
         return b.add(t, b.weight("bias", {b.shape(t)[1], 1, 1}));
       }},
      {"sub broadcast first",
       [](GraphBuilder& b, TensorRef t) {
         return b.op("sub", {b.input("y", {1, 1, 8}), t});
       }},
      {"poolmax", [](GraphBuilder& b,
                     TensorRef t) { return b.poolmax(t, {.kernel = 3, .stride = 2, .pad = 1}); }},
      {"poolavg", [](GraphBuilder& b, TensorRef t) { return b.poolavg(t, {.kernel = 2}); }},
      {"global_avgpool", [](GraphBuilder& b, TensorRef t) { return b.op("global_avgpool", {t}); }},
      {"batchnorm", [](GraphBuilder& b, TensorRef t) { return b.batchnorm(t, "bn"); }},
      {"concat with plain",
       [](GraphBuilder& b, TensorRef t) {
         return b.concat(1, {t, b.input("y", {1, 5, 8, 8}), t});
       }},
      {"split",
       [](GraphBuilder& b, TensorRef t) {
         return b.op_multi("split", {t}, {{"axis", 1}, {"sizes", Ints{20, 12}}})[1];
       }},
      {"split on block boundaries",
       [](GraphBuilder& b, TensorRef t) {
         auto parts = b.op_multi("split", {t}, {{"axis", 1}, {"sizes", Ints{16, 16}}});
         return b.ewadd(parts[0], parts[1]);
       }},
      {"reshape",
       [](GraphBuilder& b, TensorRef t) {
         return b.reshape(t, {32, -1});
       }},
      {"transpose",
       [](GraphBuilder& b, TensorRef t) {
         return b.transpose(t, {0, 2, 3, 1});
       }},
      {"softmax", [](GraphBuilder& b, TensorRef t) { return b.softmax(t, 1); }},
      {"layernorm",
       [](GraphBuilder& b, TensorRef t) {
         return b.op("layernorm", {t, b.weight("g", {8, 8})}, {{"axis", 2}});
       }},
      {"reduce_mean",
       [](GraphBuilder& b, TensorRef t) {
         return b.op("reduce_mean", {t}, {{"axes", Ints{2, 3}}, {"keepdims", 0}});
       }},
      {"conv",
       [](GraphBuilder& b, TensorRef t) {
         return b.conv(t, b.weight("w2", {16, 8, 3, 3}), {.pad = 1});
       }},  // grouped: 4 groups
      {"pad",
       [](GraphBuilder& b, TensorRef t) {
         return b.op("pad", {t}, {{"pads", Ints{0, 0, 1, 1, 0, 0, 1, 1}}});
       }},
  };
  for (auto& [what, build] : consumers) {
    GraphBuilder b(true, 9);
    auto x = b.input("x", {1, 16, 8, 8});
    auto c = b.conv(x, b.weight("w", {32, 16, 3, 3}), {.pad = 1, .act = "relu"});
    b.output("out", build(b, c));
    Graph g = b.finish();
    auto feeds = random_feeds(g, 2);
    OnednnExecutor ex(g);
    expect_close(ex.run(feeds), run_reference(g, feeds), what);
  }
}

// Every concat and split of `ex`'s plan is a view (or, with !views, none is).
void expect_concat_split_views(const OnednnExecutor& ex, bool views) {
  for (auto& p : ex.plan())
    if (p.op == "concat" || p.op == "split") {
      EXPECT_EQ(p.how == "view", views) << p.op << " runs as " << p.how;
    }
}

// Merged matmuls (NasRNN-style): a concat of a graph input and an activation feeding a
// matmul, whose output is split into parts along a contiguous axis. The concat's inputs are
// written in place and the split parts are views: neither copies at run time.
TEST(OnednnExecutor, ContiguousConcatAndSplitAreZeroCopy) {
  GraphBuilder b(true, 21);
  auto x = b.input("x", {1, 8});
  auto h = b.tanh(b.input("h", {1, 8}));
  auto joined = b.concat(1, {x, h});
  auto y = b.matmul(joined, b.weight("w", {16, 24}));
  auto parts = b.op_multi("split", {y}, {{"axis", 1}, {"sizes", Ints{8, 16}}});
  auto halves = b.op_multi("split", {parts[1]}, {{"axis", 1}, {"sizes", Ints{8, 8}}});
  b.output("a", b.ewadd(b.relu(parts[0]), halves[0]));
  b.output("b", halves[1]);
  b.output("j", joined);
  Graph g = b.finish();
  auto feeds = random_feeds(g, 3);
  OnednnExecutor ex(g);
  expect_concat_split_views(ex, true);
  // tanh, matmul, relu, ewadd: nothing for the concat, the splits or the outputs.
  EXPECT_EQ(ex.num_run_steps(), 4u);
  auto ref = run_reference(g, feeds);
  expect_close(ex.run(feeds), ref, "zero-copy concat and split");
  auto feeds2 = random_feeds(g, 4);
  expect_close(ex.run(feeds2), run_reference(g, feeds2), "second run, new feeds");
}

// Where the parts are not contiguous, or the concat cannot take its inputs in place, the data
// is copied as before, and results agree either way.
TEST(OnednnExecutor, NonContiguousConcatAndSplitCopy) {
  GraphBuilder b(true, 22);
  auto x = b.input("x", {2, 8});
  auto t = b.tanh(x);
  auto twice = b.concat(1, {t, t});                    // one tensor twice: copied
  auto rows = b.concat(1, {b.relu(x), b.sigmoid(x)});  // outer dimension 2: copied
  auto parts = b.op_multi("split", {b.matmul(rows, b.weight("w", {16, 12}))},
                          {{"axis", 1}, {"sizes", Ints{4, 8}}});
  auto cut = b.op_multi("split", {b.input("z", {1, 6, 4})}, {{"axis", 2}, {"sizes", Ints{1, 3}}});
  b.output("a", b.ewadd(twice, b.input("y", {2, 16})));
  b.output("b", parts[0]);
  b.output("c", b.relu(parts[1]));
  b.output("d", cut[1]);
  Graph g = b.finish();
  auto feeds = random_feeds(g, 5);
  OnednnExecutor ex(g);
  expect_concat_split_views(ex, false);
  expect_close(ex.run(feeds), run_reference(g, feeds), "copied concat and split");
}

// Convolutions write blocked layouts; a channel concat of such outputs whose parts fall on
// whole blocks is copied by one reorder per input into an output of the same layout, and
// one with a part off the block grid, or with inputs in different layouts, by oneDNN's
// concat. All agree with the reference executor.
TEST(OnednnExecutor, ConcatOfBlockedConvOutputs) {
  for (int64_t batch : {1, 2}) {  // with 2 images, each part is strided in the output
    GraphBuilder b(true, 24);
    auto x = b.input("x", {batch, 16, 8, 8});
    auto conv = [&](int64_t out, const char* w) {
      return b.conv(x, b.weight(w, {out, 16, 3, 3}), {.pad = 1, .act = "relu"});
    };
    auto p = conv(32, "w1"), q = conv(16, "w2"), odd = conv(12, "w3");
    auto aligned = b.concat(1, {p, q, p});
    auto off_grid = b.concat(1, {q, odd});
    auto mixed = b.concat(1, {q, b.input("y", {batch, 16, 8, 8})});
    b.output("aligned", b.relu(aligned));
    b.output("off_grid", off_grid);
    b.output("mixed", mixed);
    Graph g = b.finish();
    auto feeds = random_feeds(g, 7);
    OnednnExecutor ex(g);
    std::map<NodeId, std::string> how;
    for (auto& pl : ex.plan()) how[pl.node] = pl.how;
    if (how[p.node].find("dst blocked") != std::string::npos) {  // blocked on this machine
      EXPECT_EQ(how[aligned.node], "reorder (concat)");
      EXPECT_EQ(how[off_grid.node], "concat");
    }
    EXPECT_EQ(how[mixed.node], "concat");
    expect_close(ex.run(feeds), run_reference(g, feeds), "concats of blocked outputs");
  }
}

// A tensor read by two contiguous concats is placed in the first one only; the second copies
// it, and the first concat's own output (read by a later concat) is copied as well.
TEST(OnednnExecutor, TensorInTwoConcatsIsPlacedOnce) {
  GraphBuilder b(true, 23);
  auto x = b.input("x", {1, 4, 3});
  auto t = b.tanh(x);
  auto first = b.concat(1, {t, b.relu(x)});
  auto second = b.concat(1, {b.sigmoid(x), t});
  auto nested = b.concat(1, {first, b.op("exp", {x})});
  b.output("first", first);
  b.output("second", second);
  b.output("nested", nested);
  b.output("t", t);
  Graph g = b.finish();
  auto feeds = random_feeds(g, 6);
  OnednnExecutor ex(g);
  std::vector<std::string> concat_plans;
  for (auto& p : ex.plan())
    if (p.op == "concat") concat_plans.push_back(p.how);
  ASSERT_EQ(concat_plans.size(), 3u);
  EXPECT_EQ(concat_plans[0], "view");
  EXPECT_NE(concat_plans[1], "view");
  EXPECT_NE(concat_plans[2], "view");
  expect_close(ex.run(feeds), run_reference(g, feeds), "tensor in two concats");
  OnednnExecutor unfolded(g, {.fold_constants = false});
  expect_close(unfolded.run(feeds), run_reference(g, feeds), "unfolded");
}

// A channel split of a blocked convolution output at block boundaries stays blocked: the
// consumer convolutions take the parts without converting them.
TEST(OnednnExecutor, BlockedChannelSplitKeepsTheLayout) {
  GraphBuilder b(true, 24);
  auto x = b.input("x", {1, 16, 8, 8});
  auto c = b.conv(x, b.weight("w", {64, 16, 1, 1}), {.act = "relu"});
  auto parts = b.op_multi("split", {c}, {{"axis", 1}, {"sizes", Ints{32, 32}}});
  b.output("a", b.conv(parts[0], b.weight("w1", {32, 32, 3, 3}), {.pad = 1}));
  b.output("b", b.conv(parts[1], b.weight("w2", {32, 32, 1, 1})));
  Graph g = b.finish();
  auto feeds = random_feeds(g, 7);
  OnednnExecutor ex(g);
  expect_close(ex.run(feeds), run_reference(g, feeds), "blocked split");
  std::string conv_plan = plan_of(ex, "conv"), split_plan = plan_of(ex, "split");
  // The first convolution writes a layout of oneDNN's choice (blocked or channels-last on
  // CPUs with vector units): the split keeps it.
  if (conv_plan.rfind("dst plain", conv_plan.find(';')) == std::string::npos) {
    EXPECT_EQ(split_plan, "reorder (split, blocked); ") << conv_plan;
  }
  OnednnExecutor unfolded(g, {.fold_constants = false});
  expect_close(unfolded.run(feeds), run_reference(g, feeds), "blocked split, unfolded");
}

TEST(OnednnExecutor, ContiguousSlicesPredicate) {
  EXPECT_TRUE(onednn_slices_are_contiguous({1, 512}, 1));
  EXPECT_TRUE(onednn_slices_are_contiguous({1, 512}, -1));
  EXPECT_TRUE(onednn_slices_are_contiguous({6, 512}, 0));
  EXPECT_TRUE(onednn_slices_are_contiguous({1, 1, 4, 4}, 2));
  EXPECT_FALSE(onednn_slices_are_contiguous({2, 512}, 1));
  EXPECT_FALSE(onednn_slices_are_contiguous({1, 2, 4}, 2));
  EXPECT_FALSE(onednn_slices_are_contiguous({}, 0));
  EXPECT_FALSE(onednn_slices_are_contiguous({1, 4}, 2));
}

TEST(OnednnExecutor, EmptyTensorsRun) {
  GraphBuilder b(true, 1);
  auto x = b.input("x", {2, 0, 3});
  b.output("y", b.concat(1, {b.relu(x), b.input("z", {2, 1, 3})}));
  b.output("e", b.op("sigmoid", {x}));
  Graph g = b.finish();
  auto feeds = random_feeds(g, 1);
  OnednnExecutor ex(g);
  auto out = ex.run(feeds);
  expect_close(out, run_reference(g, feeds), "empty tensors");
  EXPECT_EQ(out[1].shape, (Shape{2, 0, 3}));
}

TEST(OnednnExecutor, RepeatedRunsReusePrimitivesAndSeeNewFeeds) {
  Graph g = residual_block();
  OnednnExecutor ex(g);
  size_t steps = ex.num_run_steps();
  auto feeds1 = random_feeds(g, 11), feeds2 = random_feeds(g, 12);
  auto out1 = ex.run(feeds1);
  auto out2 = ex.run(feeds2);
  EXPECT_EQ(ex.num_run_steps(), steps);
  expect_close(out1, run_reference(g, feeds1), "first run");
  expect_close(out2, run_reference(g, feeds2), "second run, new feeds");
  EXPECT_NE(out1[1].data, out2[1].data);
  expect_close(ex.run(feeds1), out1, "third run, first feeds again");
}

TEST(OnednnExecutor, ProfileTimesEveryRunTimeNode) {
  Graph g = residual_block();
  auto feeds = random_feeds(g, 2);
  OnednnExecutor ex(g);
  std::vector<NodeTime> times;
  auto outs = ex.run(feeds, times);
  expect_close(outs, run_reference(g, feeds), "profiled run");
  std::set<NodeId> timed;
  for (auto& t : times) {
    EXPECT_GE(t.seconds, 0.0);
    EXPECT_GE(t.conversion_seconds, 0.0);
    EXPECT_LE(t.conversion_seconds, t.seconds);
    EXPECT_TRUE(timed.insert(t.node).second) << "node " << t.node << " listed twice";
  }
  // Folded nodes cost nothing at run time; views only when they need a layout conversion.
  for (auto& p : ex.plan()) {
    if (p.how.rfind("folded", 0) == 0) {
      EXPECT_EQ(timed.count(p.node), 0u) << p.op << ": " << p.how;
    } else if (p.how != "view") {
      EXPECT_EQ(timed.count(p.node), 1u) << p.op << ": " << p.how;
    }
  }
  double total = 0;
  for (auto& t : times) total += t.seconds;
  EXPECT_GT(total, 0.0);
}

TEST(OnednnExecutor, FoldsConstantSubgraphsAtCompileTime) {
  GraphBuilder b(true, 3);
  auto x = b.input("x", {1, 4, 6, 6});
  auto w = b.op("enlarge", {b.weight("w", {4, 4, 1, 1})}, {{"kernel", Ints{3, 3}}});
  b.output("y", b.conv(x, w, {.pad = 1}));
  Graph g = b.finish();
  auto feeds = random_feeds(g, 1);
  auto ref = run_reference(g, feeds);
  OnednnExecutor folded(g), unfolded(g, {.fold_constants = false});
  EXPECT_EQ(plan_of(folded, "enlarge").rfind("folded", 0), 0u) << plan_of(folded, "enlarge");
  EXPECT_EQ(plan_of(unfolded, "enlarge").find("folded"), std::string::npos);
  EXPECT_LT(folded.num_run_steps(), unfolded.num_run_steps());
  expect_close(folded.run(feeds), ref, "folded");
  expect_close(unfolded.run(feeds), ref, "unfolded");
}

TEST(OnednnExecutor, FeedWeightsOverridesBakedData) {
  Graph g = residual_block();
  auto feeds = random_feeds(g, 4, true);
  OnednnExecutor ex(g, {.feed_weights = true});
  expect_close(ex.run(feeds), run_reference(g, feeds), "weights fed");
  // Without a feed a run-time weight falls back to its data.
  auto inputs_only = random_feeds(g, 4);
  expect_close(ex.run(inputs_only), run_reference(g, inputs_only), "weights from data");
}

// ---------------------------------------------------------------- errors

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(OnednnExecutor, RejectsBadFeedsWithClearMessages) {
  Graph g = demo_model();
  OnednnExecutor ex(g);
  EXPECT_NE(error_of([&] { ex.run({}); }).find("no value for 'image'"), std::string::npos);
  TensorMap<float> wrong{{"image", {{1, 3, 8, 8}, std::vector<float>(192)}}};
  std::string msg = error_of([&] { ex.run(wrong); });
  EXPECT_NE(msg.find("'image'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1,3,32,32]"), std::string::npos) << msg;
  auto with_weights = random_feeds(g, 1, true);
  msg = error_of([&] { ex.run(with_weights); });
  EXPECT_NE(msg.find("feed_weights"), std::string::npos) << msg;
}

TEST(OnednnExecutor, RejectsOpaqueOperators) {
  Graph g;
  TensorType t;
  t.shape = {2, 3};
  auto x = g.add_input("x", t);
  auto o = g.add_opaque("NonMaxSuppression", {{x, 0}}, {t});
  g.add_output("y", {o, 0});
  std::string msg = error_of([&] { OnednnExecutor ex(g); });
  EXPECT_NE(msg.find("opaque"), std::string::npos) << msg;
  EXPECT_NE(msg.find("NonMaxSuppression"), std::string::npos) << msg;
}

TEST(OnednnExecutor, ThreadCountIsAnOptionAndKeepsResults) {
  Graph g = residual_block();
  auto feeds = random_feeds(g, 8);
  auto ref = run_reference(g, feeds);
  OnednnExecutor one(g, {.threads = 1}), two(g, {.threads = 2});
  expect_close(one.run(feeds), ref, "1 thread");
  expect_close(two.run(feeds), ref, "2 threads");
  std::string msg = error_of([&] { OnednnExecutor bad(g, {.threads = -1}); });
  EXPECT_NE(msg.find("threads"), std::string::npos) << msg;
}

TEST(OnednnExecutor, RejectsRanksBeyondOneDnn) {
  GraphBuilder b(true, 1);
  auto x = b.input("x", Shape(13, 1));
  b.output("y", b.relu(x));
  Graph g = b.finish();
  std::string msg = error_of([&] { OnednnExecutor ex(g); });
  EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 13"), std::string::npos) << msg;
}

TEST(OnednnExecutor, ReportsTheInstructionSet) {
  EXPECT_FALSE(onednn_cpu_isa().empty());
}

}  // namespace
}  // namespace graphsub

namespace graphsub {
namespace {

// --threads 100000 crashed inside the OpenMP runtime and 4096 took minutes on a 2-node graph:
// the executor refuses counts past its limit with an error naming the limit, before OpenMP
// is asked for them.
TEST(OnednnExecutorThreads, RefusesCountsPastTheLimit) {
  GraphBuilder b;
  b.output("y", b.relu(b.input("x", {2, 3})));
  Graph g = b.finish();
  for (int t : {max_executor_threads() + 1, 100000}) {
    try {
      OnednnExecutor ex(g, {.threads = t});
      ADD_FAILURE() << t << " threads accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(max_executor_threads())),
                std::string::npos)
          << e.what();
    }
  }
  OnednnExecutor ok(g, {.threads = max_executor_threads()});  // the limit itself is allowed
  EXPECT_EQ(ok.run(random_feeds(g, 1)).size(), 1u);
}

}  // namespace
}  // namespace graphsub
