// fold-batchnorm: batchnorm(conv(x, w [, b]), scale, bias, mean, var) with constant statistics
// and a conv without activation -> conv(x, w * s, (b - mean) * s + bias), s = scale /
// sqrt(var + eps) per output channel. The axioms have no batchnorm, so this rule is checked
// numerically (tests) rather than proved.
#include <fmt/format.h>

#include "core/error.h"
#include "opt/builtin_transform.h"
#include "opt/rewrite.h"
#include "opt/structural_rules.h"

namespace graphsub::opt {
namespace {

class FoldBatchnorm : public BuiltinTransform {
 public:
  FoldBatchnorm() : BuiltinTransform("fold-batchnorm") {}

  void apply(const GraphIndex& ix, const EmitFn& emit) const override {
    const Graph& g = ix.graph();
    for (NodeId bn : ix.nodes_of("batchnorm")) {
      const Node& b = g.node(bn);
      TensorRef t = b.inputs[0];
      const Node& c = g.node(t.node);
      if (c.op->name != "conv" || c.attrs.s("act") != "none" || !ix.only_used_by(t, bn)) continue;
      bool stats_constant = true;
      for (size_t i = 1; i < 5; ++i) stats_constant = stats_constant && ix.constant(b.inputs[i]);
      if (!stats_constant || !ix.constant(c.inputs[1])) continue;
      try {
        auto out = fold(g, bn);
        if (out) emit({std::move(*out), node_label(g, t.node) + " + batchnorm"});
      } catch (const Error&) {  // shapes outside this rule (e.g. not per-channel): skip
      }
    }
  }

 private:
  static std::optional<Graph> fold(const Graph& g, NodeId bn) {
    const Node& b = g.node(bn);
    const Node& c = g.node(b.inputs[0].node);
    TensorRef scale = b.inputs[1], bias = b.inputs[2], mean = b.inputs[3], var = b.inputs[4];
    int64_t channels = g.type(c.inputs[1]).shape[0];
    if (g.type(scale).shape != Shape{channels}) return std::nullopt;
    Rewrite rw(g);
    Graph& h = rw.graph();
    TensorType scalar_type;
    scalar_type.shape = {1};
    std::string base =
        g.node(var.node).name.empty() ? fmt::format("bn{}", bn) : g.node(var.node).name;
    TensorRef eps =
        rw.add_weight(base + ".eps", scalar_type, {static_cast<float>(b.attrs.f("epsilon"))});
    auto op = [&](const char* name, std::vector<TensorRef> in, Attrs a = {}) {
      return TensorRef{h.add(name, std::move(in), std::move(a)), 0};
    };
    TensorRef s = op("div", {scale, op("sqrt", {op("add", {var, eps})})});
    TensorRef s4 = op("reshape", {s}, {{"shape", std::vector<int64_t>{channels, 1, 1, 1}}});
    TensorRef w = op("mul", {c.inputs[1], s4});
    // bias' = bias - mean * s, or with a conv bias b: (b - mean) * s + bias.
    TensorRef new_bias = c.inputs.size() > 2
                             ? op("add", {op("mul", {op("sub", {c.inputs[2], mean}), s}), bias})
                             : op("sub", {bias, op("mul", {mean, s})});
    TensorRef conv{h.add(*c.op, {c.inputs[0], w, new_bias}, c.attrs, c.name), 0};
    return std::move(rw).finish({{TensorRef{bn, 0}, conv}});
  }
};

}  // namespace

std::unique_ptr<Transform> make_fold_batchnorm() {
  return std::make_unique<FoldBatchnorm>();
}

}  // namespace graphsub::opt
