// NasRNN as in TASO's example: five steps of a cell found by architecture search. Each cell
// computes eight x*W1 + h*W2 combinations, then a tree of relu/sigmoid/tanh, adds and muls.
#include <fmt/format.h>

#include "models/layers.h"
#include "models/models.h"

namespace graphsub {
namespace {

TensorRef nas_cell(models::Layers& l, TensorRef h, TensorRef x, int64_t hidden) {
  auto& b = l.b();
  std::vector<TensorRef> t;
  for (int i = 0; i < 8; ++i) {
    auto wx = l.weight("wx", {l.shape(x)[1], hidden});
    auto wh = l.weight("wh", {l.shape(h)[1], hidden});
    t.push_back(b.ewadd(b.matmul(x, wx), b.matmul(h, wh)));
  }
  std::vector<TensorRef> m;
  m.push_back(b.ewadd(b.relu(t[0]), b.sigmoid(t[3])));
  m.push_back(b.ewadd(b.sigmoid(t[1]), b.tanh(t[2])));
  m.push_back(b.ewmul(b.sigmoid(t[4]), b.tanh(t[5])));
  m.push_back(b.ewmul(b.sigmoid(t[6]), b.relu(t[7])));
  m.push_back(b.ewadd(b.sigmoid(m[1]), b.tanh(m[2])));
  m.push_back(b.ewmul(b.tanh(m[0]), b.tanh(m[3])));
  m.push_back(b.ewmul(b.tanh(m[4]), b.tanh(m[5])));
  return b.tanh(m[6]);
}

}  // namespace

Graph nasrnn(bool with_data, int64_t hidden, int steps) {
  GraphBuilder b(with_data);
  models::Layers l(b);
  std::vector<TensorRef> xs;
  for (int i = 0; i < steps; ++i) xs.push_back(b.input(fmt::format("x{}", i), {1, hidden}));
  l.scope("init");
  TensorRef state = l.weight("state", {1, hidden});
  for (int i = 0; i < steps; ++i) {
    l.scope(fmt::format("step{}", i + 1));
    state = nas_cell(l, state, xs[static_cast<size_t>(i)], hidden);
  }
  b.output("output", state);
  return b.finish();
}

}  // namespace graphsub
