// fold-batchnorm: batchnorm(conv(x, w [, b]), scale, bias, mean, var) with constant statistics
// and a conv without activation -> conv(x, w * s, (b - mean) * s + bias), s = scale /
// sqrt(var + eps) per output channel. The axioms have no batchnorm, so this rule is checked
// numerically (tests) rather than proved.
#include <fmt/format.h>

#include "opt/transforms/builtin_transform.h"
#include "opt/transforms/structural_rules.h"

namespace graphsub::opt {
namespace {

// A match: vars = {the conv's output}, outputs = {the batchnorm's output}.
class FoldBatchnorm : public BuiltinTransform {
 public:
  FoldBatchnorm() : BuiltinTransform("fold-batchnorm") {}

  size_t find(const GraphIndex& ix, std::vector<Match>& out) const override {
    const Graph& g = ix.graph();
    size_t count = 0;
    for (NodeId bn : ix.nodes_of("batchnorm")) {
      const Node& b = g.node(bn);
      TensorRef t = b.inputs[0];
      const Node& c = g.node(t.node);
      if (c.op->name != "conv" || c.attrs.s("act") != "none" || !ix.only_used_by(t, bn)) continue;
      bool stats_constant = true;
      for (size_t i = 1; i < 5; ++i) stats_constant = stats_constant && ix.constant(b.inputs[i]);
      if (!stats_constant || !ix.constant(c.inputs[1])) continue;
      add_fusion_match(out, count, t, bn);
    }
    return count;
  }

  Outcome apply(const GraphIndex& ix, const Match& m, Builder& rb) const override {
    const Graph& g = ix.graph();
    NodeId bn = m.outputs[0].node;
    const Node& b = g.node(bn);
    const Node& c = g.node(m.vars[0].node);
    TensorRef scale = b.inputs[1], bias = b.inputs[2], mean = b.inputs[3], var = b.inputs[4];
    int64_t channels = g.type(c.inputs[1]).shape[0];
    if (g.type(scale).shape != Shape{channels})
      return NoMatch(fmt::format("batchnorm scale of shape {} is not one value per channel of {}",
                                 fmt::join(g.type(scale).shape, "x"), channels));
    TensorType scalar_type;
    scalar_type.shape = {1};
    std::string base =
        g.node(var.node).name.empty() ? fmt::format("bn{}", bn) : g.node(var.node).name;
    TensorRef eps =
        rb.add_weight(base + ".eps", scalar_type, {static_cast<float>(b.attrs.f("epsilon"))});
    Graph& h = rb.graph();
    Result<TensorRef> conv = type_checked([&] {
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
      return TensorRef{h.add(*c.op, {c.inputs[0], w, new_bias}, c.attrs, c.name), 0};
    });
    if (!conv) return conv.failure();
    rb.replace(m.outputs[0], *conv);
    return Applied{};
  }

  std::string where(const GraphIndex& ix, const Match& m) const override {
    return node_label(ix.graph(), m.vars[0].node) + " + batchnorm";
  }
};

}  // namespace

std::unique_ptr<Transform> make_fold_batchnorm() {
  return std::make_unique<FoldBatchnorm>();
}

}  // namespace graphsub::opt
