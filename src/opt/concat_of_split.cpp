// concat-of-split: concat(a, split(a, x)) over all parts of one split, in order, is x. With
// split points tracked this is exact (the split cuts where a concat joined, and the concat
// joins there again); the result must also carry x's split points, which finish() checks.
// It removes the split/concat pairs left behind when merged convolutions feed a concat.
#include <fmt/format.h>

#include "core/error.h"
#include "opt/builtin_transform.h"
#include "opt/rewrite.h"
#include "opt/structural_rules.h"

namespace graphsub::opt {
namespace {

class ConcatOfSplit : public BuiltinTransform {
 public:
  ConcatOfSplit() : BuiltinTransform("concat-of-split") {}

  void apply(const GraphIndex& ix, const EmitFn& emit) const override {
    const Graph& g = ix.graph();
    for (NodeId c : ix.nodes_of("concat")) {
      const Node& cat = g.node(c);
      NodeId s = cat.inputs[0].node;
      const Node& split = g.node(s);
      if (split.op->name != "split" || cat.inputs.size() != split.outputs.size()) continue;
      bool in_order = true;
      for (uint32_t i = 0; i < cat.inputs.size(); ++i)
        in_order = in_order && cat.inputs[i] == TensorRef{s, i};
      if (!in_order) continue;
      TensorRef x = split.inputs[0];
      int64_t rank = g.type(x).rank();
      auto axis = [rank](int64_t a) { return a < 0 ? a + rank : a; };
      if (axis(cat.attrs.i("axis")) != axis(split.attrs.i("axis"))) continue;
      try {
        auto out = Rewrite(g).finish({{{c, 0}, x}});
        if (out)
          emit({std::move(*out), fmt::format("{} of {}", node_label(g, c), node_label(g, s))});
      } catch (const Error&) {
      }
    }
  }
};

}  // namespace

std::unique_ptr<Transform> make_concat_of_split() {
  return std::make_unique<ConcatOfSplit>();
}

}  // namespace graphsub::opt
