// ResNet-50 and ResNeXt-50 as in TASO's examples (batch 1): bottleneck blocks with fused
// ReLUs, a projection convolution when the shape changes, and stages of (3, 4, 6, 3) blocks.
#include <fmt/format.h>

#include "models/layers.h"
#include "models/models.h"

namespace graphsub {
namespace {

// 1x1 -> 3x3 (grouped, strided) -> 1x1 to expand*C, plus the shortcut, then relu(add).
TensorRef bottleneck(models::Layers& l, TensorRef x, int64_t stride, int64_t c, int64_t expand,
                     int64_t groups) {
  using models::Conv;
  auto t = l.conv(x, Conv{.out = c, .act = "relu"});
  t = l.conv(t,
             Conv{.out = c, .kh = 3, .kw = 3, .stride = stride, .act = "relu", .groups = groups});
  t = l.conv(t, Conv{.out = expand * c});
  if (stride > 1 || l.shape(x)[1] != expand * c)
    x = l.conv(x, Conv{.out = expand * c, .stride = stride, .act = "relu"});
  return l.b().relu(l.b().ewadd(x, t));
}

TensorRef stages(models::Layers& l, TensorRef t, int64_t c0, int64_t expand, int64_t groups) {
  const int blocks[4] = {3, 4, 6, 3};
  for (int s = 0; s < 4; ++s) {
    for (int i = 0; i < blocks[s]; ++i) {
      l.scope(fmt::format("stage{}.block{}", s + 1, i + 1));
      int64_t stride = (s > 0 && i == 0) ? 2 : 1;
      t = bottleneck(l, t, stride, c0 << s, expand, groups);
    }
  }
  return t;
}

}  // namespace

Graph resnet50(bool with_data) {
  GraphBuilder b(with_data);
  models::Layers l(b);
  auto x = b.input("input", {1, 64, 56, 56});
  b.output("output", stages(l, x, 64, 4, 1));
  return b.finish();
}

Graph resnext50(bool with_data) {
  GraphBuilder b(with_data);
  models::Layers l(b);
  using models::Conv;
  using models::Pad;
  auto x = b.input("input", {1, 3, 224, 224});
  l.scope("stem");
  auto t = l.conv(x, Conv{.out = 64, .kh = 7, .kw = 7, .stride = 2, .act = "relu"});
  t = l.poolmax(t, 3, 2, Pad::Same);
  b.output("output", stages(l, t, 128, 2, 32));
  return b.finish();
}

}  // namespace graphsub
