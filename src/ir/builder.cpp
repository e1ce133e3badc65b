#include "ir/builder.h"

#include <algorithm>
#include <cmath>

#include "ir/hash.h"

namespace graphsub {

std::vector<float> random_values(int64_t n, uint64_t seed, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t s = seed;
  for (auto& x : v) {
    s += 0x9E3779B97F4A7C15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    x = lo + (hi - lo) * static_cast<float>((z >> 40) * (1.0 / 16777216.0));
  }
  return v;
}

GraphBuilder::GraphBuilder(bool with_data, uint64_t seed) : with_data_(with_data), seed_(seed) {}

TensorRef GraphBuilder::input(const std::string& name, Shape shape) {
  TensorType t;
  t.shape = std::move(shape);
  return {g_.add_input(name, std::move(t)), 0};
}

TensorRef GraphBuilder::weight(const std::string& name, Shape shape) {
  TensorType t;
  t.shape = std::move(shape);
  WeightData data;
  if (with_data_) {
    // Scale like a fan-in initialisation so deep stacks stay in a sane numeric range.
    int64_t fan_in = t.shape.size() >= 2 && t.shape[0] > 0 ? numel(t.shape) / t.shape[0] : 1;
    float r = 1.0f / std::sqrt(static_cast<float>(std::max<int64_t>(fan_in, 1)));
    data = std::make_shared<const std::vector<float>>(
        random_values(t.numel(), seed_ ^ hash_bytes(name.data(), name.size()), -r, r));
  }
  return {g_.add_weight(name, std::move(t), std::move(data)), 0};
}

TensorRef GraphBuilder::op(std::string_view op, std::vector<TensorRef> inputs, Attrs attrs) {
  return {g_.add(op, std::move(inputs), std::move(attrs)), 0};
}

std::vector<TensorRef> GraphBuilder::op_multi(std::string_view op, std::vector<TensorRef> inputs,
                                              Attrs attrs) {
  NodeId id = g_.add(op, std::move(inputs), std::move(attrs));
  std::vector<TensorRef> outs;
  for (uint32_t i = 0; i < g_.node(id).outputs.size(); ++i) outs.push_back({id, i});
  return outs;
}

void GraphBuilder::output(const std::string& name, TensorRef t) { g_.add_output(name, t); }

TensorRef GraphBuilder::conv(TensorRef x, TensorRef w, ConvOpts o) {
  return op("conv", {x, w},
            {{"stride", std::vector<int64_t>{o.stride, o.stride}},
             {"pads", std::vector<int64_t>{o.pad, o.pad, o.pad, o.pad}},
             {"act", o.act}});
}

TensorRef GraphBuilder::matmul(TensorRef a, TensorRef b, const std::string& act) {
  return op("matmul", {a, b}, {{"act", act}});
}

TensorRef GraphBuilder::concat(int64_t axis, std::vector<TensorRef> xs) {
  return op("concat", std::move(xs), {{"axis", axis}});
}

TensorRef GraphBuilder::transpose(TensorRef x, std::vector<int64_t> perm) {
  return op("transpose", {x}, {{"perm", std::move(perm)}});
}

TensorRef GraphBuilder::reshape(TensorRef x, std::vector<int64_t> shape) {
  return op("reshape", {x}, {{"shape", std::move(shape)}});
}

static Attrs pool_attrs(const PoolOpts& o) {
  int64_t s = o.stride ? o.stride : o.kernel;
  return {{"kernel", std::vector<int64_t>{o.kernel, o.kernel}},
          {"stride", std::vector<int64_t>{s, s}},
          {"pads", std::vector<int64_t>{o.pad, o.pad, o.pad, o.pad}}};
}

TensorRef GraphBuilder::poolmax(TensorRef x, PoolOpts o) { return op("poolmax", {x}, pool_attrs(o)); }
TensorRef GraphBuilder::poolavg(TensorRef x, PoolOpts o) { return op("poolavg", {x}, pool_attrs(o)); }

TensorRef GraphBuilder::batchnorm(TensorRef x, const std::string& name) {
  int64_t c = shape(x).at(1);
  auto scale = weight(name + ".scale", {c});
  auto bias = weight(name + ".bias", {c});
  auto mean = weight(name + ".mean", {c});
  auto var = weight(name + ".var", {c});
  if (with_data_) {  // variances must be positive
    auto v = random_values(c, seed_ ^ 0x5eedull ^ hash_bytes(name.data(), name.size()), 0.5f, 1.5f);
    g_.set_weight_data(var.node, std::make_shared<const std::vector<float>>(std::move(v)));
  }
  return op("batchnorm", {x, scale, bias, mean, var});
}

TensorRef GraphBuilder::softmax(TensorRef x, int64_t axis) { return op("softmax", {x}, {{"axis", axis}}); }

Graph GraphBuilder::finish() {
  validate(g_);
  return std::move(g_);
}

}  // namespace graphsub
