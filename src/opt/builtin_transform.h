#pragma once
// Shared plumbing of the built-in (C++) transforms: a fixed name and origin "built-in".
#include <string>

#include "opt/transform.h"

namespace graphsub::opt {

class BuiltinTransform : public Transform {
 public:
  explicit BuiltinTransform(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::string origin() const override { return "built-in"; }

 private:
  std::string name_;
};

// A built-in transform that can price each application on a scratch copy of the graph first
// (application_price.h) and build only those pricing.admit accepts: most are discarded for
// their cost. Candidates carry their number among the applications that type-check, as
// apply() emits them. Subclasses write run(); pricing is null for the plain apply().
class PricedBuiltinTransform : public BuiltinTransform {
 public:
  using BuiltinTransform::BuiltinTransform;
  void apply(const GraphIndex& ix, const EmitFn& emit) const override { run(ix, nullptr, emit); }
  void apply_priced(const GraphIndex& ix, const Pricing& pricing,
                    const EmitFn& emit) const override {
    run(ix, &pricing, emit);
  }

 protected:
  virtual void run(const GraphIndex& ix, const Pricing* pricing, const EmitFn& emit) const = 0;
};

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
