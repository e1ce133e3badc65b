// concat-of-split: concat(a, split(a, x)) over all parts of one split, in order, is x. With
// split points tracked this is exact (the split cuts where a concat joined, and the concat
// joins there again); the result must also carry x's split points, which the caller checks
// (a replacement's type must equal the replaced one's). It removes the split/concat pairs left
// behind when merged convolutions feed a concat.
#include <fmt/format.h>

#include "opt/transforms/builtin_transform.h"
#include "opt/transforms/structural_rules.h"

namespace graphsub::opt {
namespace {

// A match: vars = {x}, outputs = {the concat's output}.
class ConcatOfSplit : public BuiltinTransform {
 public:
  ConcatOfSplit() : BuiltinTransform("concat-of-split") {}

  size_t find(const GraphIndex& ix, std::vector<Match>& out) const override {
    const Graph& g = ix.graph();
    size_t count = 0;
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
      Match& m = next_match(out, count);
      m.vars = {x};
      m.outputs = {TensorRef{c, 0}};
      m.internal = {std::min(s, c), std::max(s, c)};
    }
    return count;
  }

  Outcome apply(const GraphIndex&, const Match& m, Builder& b) const override {
    b.replace(m.outputs[0], m.vars[0]);
    return Applied{};
  }

  std::string where(const GraphIndex& ix, const Match& m) const override {
    const Graph& g = ix.graph();
    NodeId c = m.outputs[0].node;
    return fmt::format("{} of {}", node_label(g, c), node_label(g, g.node(c).inputs[0].node));
  }
};

}  // namespace

std::unique_ptr<Transform> make_concat_of_split() {
  return std::make_unique<ConcatOfSplit>();
}

}  // namespace graphsub::opt
