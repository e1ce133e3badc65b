// Rotary position embedding as ONNX defines it from opset 23 (ONNX's RotaryEmbedding, portable
// to every runtime of that opset). Each head's first `rotary_embedding_dim` values are taken as
// pairs (x1, x2) and turned by an angle whose cosine and sine the inputs give per batch,
// position and pair: (x1 cos - x2 sin, x1 sin + x2 cos). The pairs are the two halves of the
// rotated part (the GPT-NeoX form) or neighbours (interleaved, the GPT-J form); the values past
// the rotated part are copied.
//
// X is [B, N, S, H] (batch, heads, sequence, head size), or [B, S, N * H] with num_heads.
// cos and sin are [B, S, R/2] (R the rotary dimension), or caches [P, R/2] read at the
// positions of the `position_ids` attribute ([B, S] row-major; ONNX's optional fourth input,
// held as an attribute since graphsub's tensors are float). Rank 2, X [S, H] with cos and sin
// [S, H/2], is one batch and one head, the form of the axiom language, where the operator is
// (rotary_embedding ?x ?cos ?sin) and its axiom spells out the halves' rotation.
//
// The kernel is the formula itself: there is no primitive for a pairwise rotation, and the
// axiom states it in primitives (ewmul, ewadd, neg, concat), which check-axioms compares.
#include "ops/families.h"
#include "ops/kernel_util.h"

namespace graphsub {
namespace {

// X as [batch, heads, sequence, head size] and what the cosines are indexed by.
struct RotaryShapes {
  int64_t batch = 1, heads = 1, seq = 1, head = 1;
  int64_t rotary = 0;        // R: the rotated values of each head
  bool packed = false;       // X is [B, S, N * H]
  std::vector<int64_t> ids;  // positions, [B, S], when cos and sin are caches
  int64_t half() const { return rotary / 2; }
};

RotaryShapes rotary_shapes(const Attrs& a, std::span<const TensorType> in) {
  const TensorType& x = in[0];
  auto bad = [&](const std::string& what) {
    return Error(fmt::format("rotary_embedding: {} (X {}, cos {}, sin {})", what,
                             shape_str(x.shape), shape_str(in[1].shape), shape_str(in[2].shape)));
  };
  RotaryShapes s;
  int64_t heads = a.i("num_heads");
  if (x.rank() == 4) {
    s = {.batch = x.shape[0], .heads = x.shape[1], .seq = x.shape[2], .head = x.shape[3]};
  } else if (x.rank() == 3) {
    if (heads < 1 || x.shape[2] % heads != 0)
      throw bad(fmt::format("X of rank 3 needs num_heads dividing its last axis, got {}", heads));
    s = {.batch = x.shape[0], .heads = heads, .seq = x.shape[1], .head = x.shape[2] / heads};
    s.packed = true;
  } else if (x.rank() == 2) {
    s = {.batch = 1, .heads = 1, .seq = x.shape[0], .head = x.shape[1]};
  } else {
    throw bad("X must have rank 4 ([batch, heads, sequence, head size]), 3 or 2");
  }
  if (x.rank() != 3 && heads != 0) throw bad("num_heads is for X of rank 3");
  int64_t r = a.i("rotary_embedding_dim");
  s.rotary = r == 0 ? s.head : r;
  if (s.rotary < 2 || s.rotary % 2 != 0 || s.rotary > s.head)
    throw bad(fmt::format("the rotary dimension {} must be even and at most the head size {}",
                          s.rotary, s.head));
  int64_t interleaved = a.i("interleaved");
  if (interleaved != 0 && interleaved != 1)
    throw bad(fmt::format("interleaved must be 0 or 1, got {}", interleaved));
  if (in[1].shape != in[2].shape) throw bad("cos and sin differ in shape");
  const Shape& c = in[1].shape;
  s.ids = a.ints("position_ids");
  if (!s.ids.empty()) {
    if (static_cast<int64_t>(s.ids.size()) != s.batch * s.seq)
      throw bad(fmt::format("{} position ids for {} batches of {} positions", s.ids.size(), s.batch,
                            s.seq));
    if (c.size() != 2 || c[1] != s.half())
      throw bad(
          fmt::format("with position ids, cos and sin must be caches [positions, {}]", s.half()));
    for (int64_t p : s.ids)
      if (p < 0 || p >= c[0])
        throw bad(fmt::format("position id {} outside the cache of {} positions", p, c[0]));
  } else {
    Shape want = x.rank() == 2 ? Shape{s.seq, s.half()} : Shape{s.batch, s.seq, s.half()};
    if (c != want) throw bad(fmt::format("cos and sin must be {}", shape_str(want)));
  }
  return s;
}

std::vector<TensorType> infer_rotary(const Attrs& a, std::span<const TensorType> in) {
  rotary_shapes(a, in);
  return {derived_type(in[0], in[0].shape)};
}

template <class T>
void kernel_rotary(const KernelIO<T>& io) {
  RotaryShapes s = rotary_shapes(io.attrs, io.in_types);
  bool interleaved = io.attrs.i("interleaved") != 0;
  const T* x = io.in[0];
  T* y = io.out[0];
  std::copy_n(x, io.out_types[0].numel(), y);
  // Element (b, n, t, d) of X: [B, N, S, H], or [B, S, N, H] when packed.
  auto at = [&](int64_t b, int64_t n, int64_t t) {
    return s.packed ? ((b * s.seq + t) * s.heads + n) * s.head
                    : ((b * s.heads + n) * s.seq + t) * s.head;
  };
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t t = 0; t < s.seq; ++t) {
      int64_t row = s.ids.empty() ? b * s.seq + t : s.ids[static_cast<size_t>(b * s.seq + t)];
      const T* cos = io.in[1] + row * s.half();
      const T* sin = io.in[2] + row * s.half();
      for (int64_t n = 0; n < s.heads; ++n) {
        int64_t base = at(b, n, t);
        for (int64_t i = 0; i < s.half(); ++i) {
          int64_t i1 = interleaved ? base + 2 * i : base + i;
          int64_t i2 = interleaved ? i1 + 1 : i1 + s.half();
          T x1 = x[i1], x2 = x[i2];
          y[i1] = static_cast<T>(x1 * cos[i] - x2 * sin[i]);
          y[i2] = static_cast<T>(x1 * sin[i] + x2 * cos[i]);
        }
      }
    }
}

OpCost cost_rotary(const Attrs& a, std::span<const TensorType> in,
                   std::span<const TensorType> out) {
  RotaryShapes s = rotary_shapes(a, in);
  OpCost c = streaming_cost(in, out, 0);
  c.flops = 6.0 * static_cast<double>(s.batch * s.heads * s.seq * s.half());
  return c;
}

// (rotary_embedding ?x ?cos ?sin) has no parameters (its attributes take their defaults): one
// batch and head (rank 2), the halves form, every value rotated, cos and sin per position.
std::optional<std::vector<AxiomParam>> rotary_attrs_to_params(const Attrs& a,
                                                              std::span<const TensorType> in) {
  if (in[0].rank() != 2 || a.i("interleaved") != 0 || !a.ints("position_ids").empty())
    return std::nullopt;
  int64_t r = a.i("rotary_embedding_dim");
  if (r != 0 && r != in[0].shape[1]) return std::nullopt;
  return std::vector<AxiomParam>{};
}

}  // namespace

void register_rotary_ops(std::vector<OpDef>& defs) {
  defs.push_back({.name = "rotary_embedding",
                  .axiom_name = "rotary_embedding",
                  .min_inputs = 3,
                  .max_inputs = 3,
                  .attrs = {int_attr("interleaved", 0), int_attr("rotary_embedding_dim", 0),
                            int_attr("num_heads", 0), ints_attr("position_ids")},
                  .infer = infer_rotary,
                  .kernel_f32 = kernel_rotary<float>,
                  .kernel_u32 = kernel_rotary<uint32_t>,
                  .cost = cost_rotary,
                  .onnx_since = 23,
                  .attrs_to_params = rotary_attrs_to_params});
}

}  // namespace graphsub
