// fuse-activation-{conv,matmul}: act(op(x, w)) -> op(x, w, act) when op has no activation yet
// and nothing else reads its output.
#include "core/error.h"
#include "ops/op_def.h"
#include "opt/builtin_transform.h"
#include "opt/rewrite.h"
#include "opt/structural_rules.h"

namespace graphsub::opt {
namespace {

class FuseActivation : public BuiltinTransform {
 public:
  explicit FuseActivation(std::string into)
      : BuiltinTransform("fuse-activation-" + into), into_(std::move(into)) {}

  void apply(const GraphIndex& ix, const EmitFn& emit) const override {
    const Graph& g = ix.graph();
    for (const std::string& act : fused_activations()) {
      for (NodeId a : ix.nodes_of(act)) {
        TensorRef t = g.node(a).inputs[0];
        const Node& p = g.node(t.node);
        if (p.op->name != into_ || p.attrs.s("act") != "none" || !ix.only_used_by(t, a)) continue;
        try {
          Rewrite rw(g);
          Attrs attrs = p.attrs;
          attrs.set("act", act);
          TensorRef fused{rw.graph().add(*p.op, p.inputs, attrs, p.name), 0};
          auto out = std::move(rw).finish({{TensorRef{a, 0}, fused}});
          if (out) emit({std::move(*out), node_label(g, t.node) + " + " + act});
        } catch (const Error&) {  // does not type-check: not an application
        }
      }
    }
  }

 private:
  std::string into_;
};

}  // namespace

std::unique_ptr<Transform> make_fuse_activation(const std::string& into) {
  return std::make_unique<FuseActivation>(into);
}

}  // namespace graphsub::opt
