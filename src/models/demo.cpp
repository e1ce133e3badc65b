#include "ir/builder.h"
#include "models/models.h"

namespace graphsub {

Graph demo_model(bool with_data) {
  GraphBuilder b(with_data);
  auto x = b.input("image", {1, 3, 32, 32});
  auto stem = b.conv(x, b.weight("stem.w", {16, 3, 3, 3}), {.stride = 1, .pad = 1, .act = "relu"});
  // Two branches on one input (a merge opportunity), then a residual add.
  auto a = b.conv(stem, b.weight("a.w", {16, 16, 3, 3}), {.pad = 1});
  auto c = b.conv(stem, b.weight("c.w", {16, 16, 1, 1}));
  auto sum = b.relu(b.ewadd(b.ewadd(a, c), stem));
  auto pooled = b.poolmax(sum, {.kernel = 2});
  auto flat = b.reshape(pooled, {1, 16 * 16 * 16});
  auto logits = b.matmul(flat, b.weight("fc.w", {16 * 16 * 16, 10}));
  b.output("probs", b.softmax(logits));
  return b.finish();
}

}  // namespace graphsub
