// fuse-activation-{conv,matmul}: act(op(x, w)) -> op(x, w, act) when op has no activation yet
// and nothing else reads its output.
#include "ops/op_def.h"
#include "opt/transforms/builtin_transform.h"
#include "opt/transforms/structural_rules.h"

namespace graphsub::opt {
namespace {

// A match: vars = {op's output}, outputs = {the activation's output}.
class FuseActivation : public BuiltinTransform {
 public:
  explicit FuseActivation(std::string into)
      : BuiltinTransform("fuse-activation-" + into), into_(std::move(into)) {}

  size_t find(const GraphIndex& ix, std::vector<Match>& out) const override {
    const Graph& g = ix.graph();
    size_t count = 0;
    for (const std::string& act : fused_activations()) {
      for (NodeId a : ix.nodes_of(act)) {
        TensorRef t = g.node(a).inputs[0];
        const Node& p = g.node(t.node);
        if (p.op->name != into_ || p.attrs.s("act") != "none" || !ix.only_used_by(t, a)) continue;
        add_fusion_match(out, count, t, a);
      }
    }
    return count;
  }

  Outcome apply(const GraphIndex& ix, const Match& m, Builder& b) const override {
    const Node& p = ix.graph().node(m.vars[0].node);
    Attrs attrs = p.attrs;
    attrs.set("act", activation(ix, m));
    Result<TensorRef> fused = b.add(*p.op, p.inputs, std::move(attrs), p.name);
    if (!fused) return fused.failure();
    b.replace(m.outputs[0], *fused);
    return Applied{};
  }

  std::string where(const GraphIndex& ix, const Match& m) const override {
    return node_label(ix.graph(), m.vars[0].node) + " + " + activation(ix, m);
  }

 private:
  static const std::string& activation(const GraphIndex& ix, const Match& m) {
    return ix.graph().node(m.outputs[0].node).op->name;
  }

  std::string into_;
};

}  // namespace

std::unique_ptr<Transform> make_fuse_activation(const std::string& into) {
  return std::make_unique<FuseActivation>(into);
}

}  // namespace graphsub::opt
