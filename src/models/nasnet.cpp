// NasNet-A as in TASO's example: a 7x7/2 stem and 3x3/2 max-pool, then three repeats of five
// normal cells and one reduction cell, doubling the cell width at each reduction.
#include <fmt/format.h>

#include "models/layers.h"
#include "models/models.h"

namespace graphsub {
namespace {

using models::Conv;
using models::Layers;
using models::Pad;

TensorRef squeeze(Layers& l, int64_t out, TensorRef x) {
  return l.conv(x, Conv{.out = out, .act = "relu"});
}

// Brings `x` to the channels and spatial size of `like` (1x1, or 3x3/2 when it is larger).
TensorRef fit(Layers& l, TensorRef like, TensorRef x) {
  if (l.shape(x)[2] == l.shape(like)[2]) return squeeze(l, l.shape(like)[1], x);
  return l.conv(x, Conv{.out = l.shape(like)[1], .kh = 3, .kw = 3, .stride = 2, .act = "relu"});
}

// Depth-wise k x k (groups = out channels) followed by a point-wise 1x1.
TensorRef separable(Layers& l, TensorRef x, int64_t out, int64_t k, int64_t stride) {
  int64_t in = l.shape(x)[1];
  auto t =
      l.conv(x, Conv{.out = out, .kh = k, .kw = k, .stride = stride, .groups = in / (in / out)});
  return l.conv(t, Conv{.out = out});
}

TensorRef normal_cell(Layers& l, TensorRef prev, TensorRef cur, int64_t out) {
  auto& b = l.b();
  cur = squeeze(l, out, cur);
  prev = fit(l, cur, prev);
  std::vector<TensorRef> t = {separable(l, cur, out, 3, 1),     cur,
                              separable(l, prev, out, 3, 1),    separable(l, cur, out, 3, 1),
                              l.poolavg(cur, 3, 1, Pad::Same),  prev,
                              l.poolavg(prev, 3, 1, Pad::Same), l.poolavg(prev, 3, 1, Pad::Same),
                              separable(l, prev, out, 3, 1),    separable(l, prev, out, 3, 1)};
  std::vector<TensorRef> outs;
  for (int i = 0; i < 5; ++i) outs.push_back(b.ewadd(t[2 * i], t[2 * i + 1]));
  return b.concat(1, outs);
}

TensorRef reduction_cell(Layers& l, TensorRef prev, TensorRef cur, int64_t out) {
  auto& b = l.b();
  cur = squeeze(l, out, cur);
  prev = fit(l, cur, prev);
  std::vector<TensorRef> outs;
  outs.push_back(b.ewadd(separable(l, prev, out, 7, 2), separable(l, cur, out, 5, 2)));
  outs.push_back(b.ewadd(l.poolmax(cur, 3, 2, Pad::Same), separable(l, prev, out, 7, 2)));
  outs.push_back(b.ewadd(l.poolavg(cur, 3, 2, Pad::Same), separable(l, prev, out, 5, 2)));
  outs.push_back(b.ewadd(l.poolmax(outs[0], 3, 1, Pad::Same), outs[1]));
  outs.push_back(b.ewadd(l.poolavg(outs[0], 3, 1, Pad::Same), outs[1]));
  return b.concat(1, outs);
}

}  // namespace

Graph nasnet_a(bool with_data) {
  GraphBuilder b(with_data);
  Layers l(b);
  auto x = b.input("input", {1, 3, 224, 224});
  l.scope("stem");
  auto t = l.conv(x, Conv{.out = 64, .kh = 7, .kw = 7, .stride = 2, .act = "relu"});
  t = l.poolmax(t, 3, 2, Pad::Same);
  int64_t out = 128;
  for (int r = 0; r < 3; ++r) {
    TensorRef prev = t, cur = t;
    for (int j = 0; j < 5; ++j) {
      l.scope(fmt::format("repeat{}.normal{}", r + 1, j + 1));
      auto next = normal_cell(l, prev, cur, out);
      prev = cur;
      cur = next;
    }
    out *= 2;
    l.scope(fmt::format("repeat{}.reduction", r + 1));
    t = reduction_cell(l, prev, cur, out);
  }
  b.output("output", t);
  return b.finish();
}

}  // namespace graphsub
