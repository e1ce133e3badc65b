#pragma once
// Layer helpers shared by the built-in models: convolutions with TASO's padding names
// (SAME: centred (k-1)/2 per side for odd kernels; VALID: none), pools, matmuls with fresh,
// uniquely named weights. Internal to src/models.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/builder.h"

namespace graphsub::models {

enum class Pad { Same, Valid };

struct Conv {
  int64_t out = 0;         // output channels
  int64_t kh = 1, kw = 1;  // kernel
  int64_t stride = 1;
  Pad pad = Pad::Same;
  std::string act = "none";
  int64_t groups = 1;
};

class Layers {
 public:
  explicit Layers(GraphBuilder& b) : b_(b) {}

  // A fresh weight named "<scope>.<kind><n>" (unique per model).
  TensorRef weight(const std::string& kind, Shape shape);
  std::string fresh_name(const std::string& kind);
  TensorRef conv(TensorRef x, const Conv& c);
  TensorRef poolmax(TensorRef x, int64_t k, int64_t stride, Pad pad);
  TensorRef poolavg(TensorRef x, int64_t k, int64_t stride, Pad pad);
  // x [M,K] times a fresh weight [K,n].
  TensorRef dense(TensorRef x, int64_t n, const std::string& act = "none");

  void scope(std::string s) { scope_ = std::move(s); }
  GraphBuilder& b() { return b_; }
  const Shape& shape(TensorRef t) const { return b_.shape(t); }

 private:
  GraphBuilder& b_;
  std::string scope_ = "m";
  int counter_ = 0;
};

}  // namespace graphsub::models
