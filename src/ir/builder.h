#pragma once
// A builder that reads like the model it builds:
//   GraphBuilder b;
//   auto x = b.input("x", {1, 64, 56, 56});
//   auto y = b.conv(x, b.weight("w1", {64, 64, 3, 3}), {.stride = 1, .pad = 1, .act = "relu"});
//   b.output("y", y);
//   Graph g = b.finish();
// Every method ends in the generic op(), so any registered operator is reachable without
// adding a method here.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace graphsub {

struct ConvOpts {
  int64_t stride = 1;
  int64_t pad = 0;  // symmetric padding on all sides
  std::string act = "none";
};

struct PoolOpts {
  int64_t kernel = 2;
  int64_t stride = 0;  // 0: same as kernel
  int64_t pad = 0;
};

class GraphBuilder {
 public:
  // with_data: weights get deterministic pseudo-random values (seeded by name and seed) so
  // the graph can be executed; otherwise weights are known by shape only.
  explicit GraphBuilder(bool with_data = true, uint64_t seed = 1);

  TensorRef input(const std::string& name, Shape shape);
  TensorRef weight(const std::string& name, Shape shape);
  TensorRef op(std::string_view op, std::vector<TensorRef> inputs, Attrs attrs = {});
  std::vector<TensorRef> op_multi(std::string_view op, std::vector<TensorRef> inputs,
                                  Attrs attrs = {});
  void output(const std::string& name, TensorRef t);

  TensorRef conv(TensorRef x, TensorRef w, ConvOpts o = {});
  TensorRef matmul(TensorRef a, TensorRef b, const std::string& act = "none");
  TensorRef relu(TensorRef x) { return op("relu", {x}); }
  TensorRef sigmoid(TensorRef x) { return op("sigmoid", {x}); }
  TensorRef tanh(TensorRef x) { return op("tanh", {x}); }
  TensorRef ewadd(TensorRef a, TensorRef b) { return op("ewadd", {a, b}); }
  TensorRef ewmul(TensorRef a, TensorRef b) { return op("ewmul", {a, b}); }
  TensorRef add(TensorRef a, TensorRef b) { return op("add", {a, b}); }
  TensorRef concat(int64_t axis, std::vector<TensorRef> xs);
  TensorRef transpose(TensorRef x, std::vector<int64_t> perm);
  TensorRef reshape(TensorRef x, std::vector<int64_t> shape);
  TensorRef poolmax(TensorRef x, PoolOpts o);
  TensorRef poolavg(TensorRef x, PoolOpts o);
  TensorRef batchnorm(TensorRef x, const std::string& name);  // creates its 4 weights
  TensorRef softmax(TensorRef x, int64_t axis = -1);

  const Shape& shape(TensorRef t) const { return g_.type(t).shape; }
  Graph& graph() { return g_; }
  Graph finish();

 private:
  Graph g_;
  bool with_data_;
  uint64_t seed_;
  int counter_ = 0;
};

// Deterministic pseudo-random values in [lo, hi) (SplitMix64), shared by builders and tests.
std::vector<float> random_values(int64_t n, uint64_t seed, float lo = -1.f, float hi = 1.f);

}  // namespace graphsub
