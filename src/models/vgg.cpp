// VGG-19's convolutional part (batch 1, 224x224): sixteen 3x3 convolutions with fused ReLU in
// five blocks, each closed by a 2x2/2 max-pool. The three fully connected layers are left
// out: their 120 M weights would dominate memory without giving the optimizer any work.
#include <fmt/format.h>

#include "models/layers.h"
#include "models/models.h"

namespace graphsub {

Graph vgg19(bool with_data) {
  GraphBuilder b(with_data);
  models::Layers l(b);
  auto t = b.input("input", {1, 3, 224, 224});
  const int64_t width[5] = {64, 128, 256, 512, 512};
  const int convs[5] = {2, 2, 4, 4, 4};
  for (int s = 0; s < 5; ++s) {
    l.scope(fmt::format("block{}", s + 1));
    for (int i = 0; i < convs[s]; ++i)
      t = l.conv(t, models::Conv{.out = width[s], .kh = 3, .kw = 3, .act = "relu"});
    t = l.poolmax(t, 2, 2, models::Pad::Valid);
  }
  b.output("output", t);
  return b.finish();
}

}  // namespace graphsub
