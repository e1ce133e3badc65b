// BERT-style encoder stack after TASO's example: per layer, Q/K/V projections, a split into
// heads by reshape and transpose, two batched matmuls, the inverse transpose and reshape,
// and an output projection. Two departures keep it a real attention layer whose values stay
// finite over eight layers (TASO's script, without them, grows cubically per layer and
// overflows float on random weights): the logits are scaled by 1/sqrt(d_k) and normalised with
// a softmax, and the layer output is added to its input (the residual connection). TASO's
// script also fed the layer input, not the attention, to the output projection; here the
// attention feeds it.
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "core/error.h"
#include "models/layers.h"
#include "models/models.h"

namespace graphsub {
namespace {

TensorRef attention(models::Layers& l, TensorRef x, const BertConfig& c) {
  auto& b = l.b();
  int64_t d = c.hidden, dk = c.hidden / c.heads;
  auto q = l.dense(x, d), k = l.dense(x, d), v = l.dense(x, d);
  // [B*S, D] -> [B, S, H, dk] -> [B, H, S, dk]
  auto heads = [&](TensorRef t) {
    return b.transpose(b.reshape(t, {c.batch, c.seq, c.heads, dk}), {0, 2, 1, 3});
  };
  auto qh = heads(q), vh = heads(v);
  auto kt = b.transpose(b.reshape(k, {c.batch, c.seq, c.heads, dk}), {0, 2, 3, 1});  // [B,H,dk,S]
  auto scale = b.weight(l.fresh_name("scale"), {});                                  // 0-d
  b.graph().set_weight_data(scale.node, std::make_shared<const std::vector<float>>(
                                            1, 1.0f / std::sqrt(static_cast<float>(dk))));
  auto logits = b.softmax(b.op("smul", {b.matmul(qh, kt), scale}));  // [B,H,S,S]
  auto ctx = b.matmul(logits, vh);                                   // [B,H,S,dk]
  auto merged = b.reshape(b.transpose(ctx, {0, 2, 1, 3}), {c.batch * c.seq, d});
  return b.ewadd(x, l.dense(merged, d));
}

}  // namespace

Graph bert(bool with_data, const BertConfig& c) {
  if (c.heads < 1 || c.hidden % c.heads != 0)
    throw Error(
        fmt::format("bert: hidden size {} does not split into {} heads", c.hidden, c.heads));
  GraphBuilder b(with_data);
  models::Layers l(b);
  auto x = b.input("input", {c.batch * c.seq, c.hidden});
  auto t = b.relu(x);
  for (int i = 0; i < c.layers; ++i) {
    l.scope(fmt::format("layer{}", i + 1));
    t = attention(l, t, c);
  }
  b.output("output", t);
  return b.finish();
}

}  // namespace graphsub
