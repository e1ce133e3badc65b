// SqueezeNet (v1.1 layout, batch 1, 224x224): a 3x3/2 stem, eight fire modules (1x1 squeeze,
// then 1x1 and 3x3 expands on the same input, concatenated), a 1x1 classifier convolution and
// a 13x13 average pool.
#include <fmt/format.h>

#include "models/layers.h"
#include "models/models.h"

namespace graphsub {
namespace {

using models::Conv;
using models::Layers;
using models::Pad;

TensorRef fire(Layers& l, TensorRef x, int64_t squeeze, int64_t expand) {
  auto s = l.conv(x, Conv{.out = squeeze, .act = "relu"});
  auto e1 = l.conv(s, Conv{.out = expand, .act = "relu"});
  auto e3 = l.conv(s, Conv{.out = expand, .kh = 3, .kw = 3, .act = "relu"});
  return l.b().concat(1, {e1, e3});
}

}  // namespace

Graph squeezenet(bool with_data) {
  GraphBuilder b(with_data);
  Layers l(b);
  auto x = b.input("input", {1, 3, 224, 224});
  l.scope("stem");
  auto t =
      l.conv(x, Conv{.out = 64, .kh = 3, .kw = 3, .stride = 2, .pad = Pad::Valid, .act = "relu"});
  t = l.poolmax(t, 3, 2, Pad::Valid);
  const int64_t squeeze[8] = {16, 16, 32, 32, 48, 48, 64, 64};
  for (int i = 0; i < 8; ++i) {
    l.scope(fmt::format("fire{}", i + 2));
    t = fire(l, t, squeeze[i], 4 * squeeze[i]);
    if (i == 1 || i == 3) t = l.poolmax(t, 3, 2, Pad::Valid);
  }
  l.scope("classifier");
  t = l.conv(t, Conv{.out = 1000, .act = "relu"});
  b.output("output", l.poolavg(t, l.shape(t)[2], 1, Pad::Valid));
  return b.finish();
}

}  // namespace graphsub
