// Inception-v3 as in TASO's example (299x299 input, batch 1): the stem, three A modules, the B
// reduction, four C modules with 1x7/7x1 factorised convolutions, the D reduction, two E
// modules, and an 8x8 average pool. Every convolution has a fused ReLU.
#include <fmt/format.h>

#include "models/layers.h"
#include "models/models.h"

namespace graphsub {
namespace {

using models::Conv;
using models::Layers;
using models::Pad;

TensorRef cv(Layers& l, TensorRef x, int64_t out, int64_t kh, int64_t kw, int64_t stride = 1,
             Pad pad = Pad::Same) {
  return l.conv(x,
                Conv{.out = out, .kh = kh, .kw = kw, .stride = stride, .pad = pad, .act = "relu"});
}

TensorRef module_a(Layers& l, TensorRef x, int64_t pool_channels) {
  auto t1 = cv(l, x, 64, 1, 1);
  auto t2 = cv(l, cv(l, x, 48, 1, 1), 64, 5, 5);
  auto t3 = cv(l, cv(l, cv(l, x, 64, 1, 1), 96, 3, 3), 96, 3, 3);
  auto t4 = cv(l, l.poolavg(x, 3, 1, Pad::Same), pool_channels, 1, 1);
  return l.b().concat(1, {t1, t2, t3, t4});
}

TensorRef module_b(Layers& l, TensorRef x) {
  auto t1 = cv(l, x, 384, 3, 3, 2, Pad::Valid);
  auto t2 = cv(l, cv(l, cv(l, x, 64, 1, 1), 96, 3, 3), 96, 3, 3, 2, Pad::Valid);
  auto t3 = l.poolmax(x, 3, 2, Pad::Valid);
  return l.b().concat(1, {t1, t2, t3});
}

TensorRef module_c(Layers& l, TensorRef x, int64_t c) {
  auto t1 = cv(l, x, 192, 1, 1);
  auto t2 = cv(l, cv(l, cv(l, x, c, 1, 1), c, 1, 7), 192, 7, 1);
  auto t3 = cv(l, x, c, 1, 1);
  t3 = cv(l, cv(l, cv(l, cv(l, t3, c, 7, 1), c, 1, 7), c, 7, 1), 192, 1, 7);
  auto t4 = cv(l, l.poolavg(x, 3, 1, Pad::Same), 192, 1, 1);
  return l.b().concat(1, {t1, t2, t3, t4});
}

TensorRef module_d(Layers& l, TensorRef x) {
  auto t1 = cv(l, cv(l, x, 192, 1, 1), 320, 3, 3, 2, Pad::Valid);
  auto t2 = cv(l, cv(l, cv(l, x, 192, 1, 1), 192, 1, 7), 192, 7, 1);
  t2 = cv(l, t2, 192, 3, 3, 2, Pad::Valid);
  auto t3 = l.poolmax(x, 3, 2, Pad::Valid);
  return l.b().concat(1, {t1, t2, t3});
}

TensorRef module_e(Layers& l, TensorRef x) {
  auto t1 = cv(l, x, 320, 1, 1);
  auto t2i = cv(l, x, 384, 1, 1);
  auto t2 = cv(l, t2i, 384, 1, 3);
  auto t3 = cv(l, t2i, 384, 3, 1);
  auto t3i = cv(l, cv(l, x, 448, 1, 1), 384, 3, 3);
  auto t4 = cv(l, t3i, 384, 1, 3);
  auto t5 = cv(l, t3i, 384, 3, 1);
  auto t6 = cv(l, l.poolavg(x, 3, 1, Pad::Same), 192, 1, 1);
  return l.b().concat(1, {t1, t2, t3, t4, t5, t6});
}

}  // namespace

Graph inception_v3(bool with_data) {
  GraphBuilder b(with_data);
  Layers l(b);
  auto x = b.input("input", {1, 3, 299, 299});
  l.scope("stem");
  auto t = cv(l, x, 32, 3, 3, 2, Pad::Valid);
  t = cv(l, t, 32, 3, 3, 1, Pad::Valid);
  t = cv(l, t, 64, 3, 3);
  t = l.poolmax(t, 3, 2, Pad::Valid);
  t = cv(l, t, 80, 1, 1, 1, Pad::Valid);
  t = cv(l, t, 192, 3, 3, 1, Pad::Valid);
  t = l.poolmax(t, 3, 2, Pad::Valid);
  const int64_t a_pool[3] = {32, 64, 64};
  for (int i = 0; i < 3; ++i) {
    l.scope(fmt::format("a{}", i + 1));
    t = module_a(l, t, a_pool[i]);
  }
  l.scope("b");
  t = module_b(l, t);
  const int64_t c_width[4] = {128, 160, 160, 192};
  for (int i = 0; i < 4; ++i) {
    l.scope(fmt::format("c{}", i + 1));
    t = module_c(l, t, c_width[i]);
  }
  l.scope("d");
  t = module_d(l, t);
  for (int i = 0; i < 2; ++i) {
    l.scope(fmt::format("e{}", i + 1));
    t = module_e(l, t);
  }
  b.output("output", l.poolavg(t, 8, 1, Pad::Valid));
  return b.finish();
}

}  // namespace graphsub
