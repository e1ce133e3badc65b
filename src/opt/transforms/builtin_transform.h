#pragma once
// Shared plumbing of the built-in (C++) transforms: a fixed name and origin "built-in".
#include <algorithm>
#include <string>
#include <vector>

#include "opt/transforms/transform.h"

namespace graphsub::opt {

class BuiltinTransform : public Transform {
 public:
  explicit BuiltinTransform(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::string origin() const override { return "built-in"; }

 private:
  std::string name_;
};

// Writes the match of an operator whose output `t` only `consumer` reads, fused into one
// node that replaces the consumer's output: vars = {t}, outputs = {consumer's output},
// internal = both nodes.
inline void add_fusion_match(std::vector<Match>& out, size_t& count, TensorRef t, NodeId consumer) {
  Match& m = next_match(out, count);
  m.vars = {t};
  m.outputs = {TensorRef{consumer, 0}};
  m.internal = {std::min(t.node, consumer), std::max(t.node, consumer)};
}

// The activation fused by a conv or matmul attribute `act`: "relu", "sigmoid", "tanh".
bool is_fusable_activation(const std::string& op);

// Conv facts used by several rules.
struct ConvShape {
  int64_t groups = 1;
  int64_t kh = 0, kw = 0;
  bool has_bias = false;
};
ConvShape conv_shape(const Graph& g, NodeId conv);

}  // namespace graphsub::opt
