// fuse-conv-add: ewadd(conv(x, w [, b]), y) [-> relu/sigmoid/tanh] -> conv_add(x, w, y [, b],
// act) when the conv has no activation and nothing else reads its output (nor the addition's,
// when an activation is fused too). The addition and the activation are then computed as the
// convolution writes its result (oneDNN's sum and eltwise post-ops) instead of in two more
// passes over memory. `add` counts as ewadd when both operands have the same shape. The axioms
// have no conv_add, so this rule is checked numerically (tests) rather than proved.
//
// One application fuses every such site of the graph at once. Sites are disjoint (a conv read
// only by its addition belongs to one site), each only removes work, and fusing them one at a
// time would spend the search's budget on the orders of a ResNet's 16 or a NasNet's 54 fusions.
#include <fmt/format.h>

#include <algorithm>

#include "opt/transforms/builtin_transform.h"
#include "opt/transforms/structural_rules.h"

namespace graphsub::opt {
namespace {

// One fusable addition: the conv, the residual, and the tensor the fused node replaces.
struct Site {
  NodeId conv = 0;
  TensorRef residual, result;
  std::string act = "none";
};

// The one match: vars = the additions that have a site ({add, 0}), internal = the nodes of
// their sites (convs, additions, activations).
class FuseConvAdd : public BuiltinTransform {
 public:
  FuseConvAdd() : BuiltinTransform("fuse-conv-add") {}

  size_t find(const GraphIndex& ix, std::vector<Match>& out) const override {
    const Graph& g = ix.graph();
    std::vector<NodeId> adds = ix.nodes_of("ewadd");
    for (NodeId a : ix.nodes_of("add"))
      if (g.type(g.node(a).inputs[0]).shape == g.type(g.node(a).inputs[1]).shape) adds.push_back(a);
    std::sort(adds.begin(), adds.end());
    size_t count = 0;
    Match* m = nullptr;
    for (NodeId a : adds)
      for (size_t k = 0; k < 2; ++k) {
        auto site = find_site(ix, a, k);
        if (!site) continue;
        if (!m) m = &next_match(out, count);
        if (m->vars.empty() || m->vars.back().node != a) m->vars.push_back({a, 0});
        m->internal.push_back(site->conv);
        m->internal.push_back(site->result.node);
        m->internal.push_back(a);
      }
    if (m) {
      std::sort(m->internal.begin(), m->internal.end());
      m->internal.erase(std::unique(m->internal.begin(), m->internal.end()), m->internal.end());
    }
    return count;
  }

  Outcome apply(const GraphIndex& ix, const Match& m, Builder& b) const override {
    if (fuse(ix, m, b, nullptr) == 0) return NoMatch("no fused convolution has the sum's type");
    return Applied{};
  }

  // The first site fused, and how many more (built again on a scratch copy: a site whose fused
  // node does not type-check is not counted).
  std::string where(const GraphIndex& ix, const Match& m) const override {
    ScratchGraph scratch;
    std::vector<Replacement> reps;
    Builder b(ix.graph(), scratch, reps);
    std::string where;
    size_t n = fuse(ix, m, b, &where);
    if (n > 1) where += fmt::format(" and {} more", n - 1);
    return where;
  }

 private:
  // Fuses every site of the match into `b` (the first operand that a conv computes; an
  // addition of two convs fuses its first whose fused node type-checks); returns how many.
  // `where`, if given, gets the first site's label.
  static size_t fuse(const GraphIndex& ix, const Match& m, Builder& b, std::string* where) {
    const Graph& g = ix.graph();
    size_t fused_sites = 0;
    for (TensorRef add : m.vars)
      for (size_t k = 0; k < 2; ++k) {
        auto site = find_site(ix, add.node, k);
        if (!site) continue;
        auto fused = build(b, g.node(site->conv), *site);
        if (!fused) continue;
        b.replace(site->result, *fused);
        if (where && fused_sites == 0)
          *where =
              node_label(g, site->conv) + " + add" + (site->act == "none" ? "" : " + " + site->act);
        ++fused_sites;
        break;
      }
    return fused_sites;
  }

  // The addition `a` with its operand k computed by a conv that nothing else reads.
  static std::optional<Site> find_site(const GraphIndex& ix, NodeId a, size_t k) {
    const Graph& g = ix.graph();
    const Node& add = g.node(a);
    TensorRef t = add.inputs[k], y = add.inputs[1 - k];
    const Node& c = g.node(t.node);
    if (t == y || c.op->name != "conv" || c.attrs.s("act") != "none" || ix.constant(t) ||
        !ix.only_used_by(t, a))
      return std::nullopt;
    Site s{t.node, y, {a, 0}};
    // The activation that alone reads the sum, if any, is fused as well.
    auto readers = ix.users(s.result);
    if (readers.size() == 1 && is_fusable_activation(g.node(readers[0]).op->name) &&
        ix.only_used_by(s.result, readers[0])) {
      s.act = g.node(readers[0]).op->name;
      s.result = {readers[0], 0};
    }
    return s;
  }

  // The fused node added to b; a failed match when it does not type-check or its type differs
  // from the tensor it replaces (e.g. in split points), which would refuse the whole
  // application.
  static Result<TensorRef> build(Builder& b, const Node& c, const Site& s) {
    std::vector<TensorRef> in{c.inputs[0], c.inputs[1], s.residual};
    if (c.inputs.size() > 2) in.push_back(c.inputs[2]);
    Attrs attrs = c.attrs;
    attrs.set("act", s.act);
    Result<TensorRef> fused = b.add("conv_add", std::move(in), std::move(attrs), c.name);
    if (fused && b.graph().type(*fused) != b.graph().type(s.result))
      return NoMatch("the fused convolution's type differs from the sum's");
    return fused;
  }
};

}  // namespace

std::unique_ptr<Transform> make_fuse_conv_add() {
  return std::make_unique<FuseConvAdd>();
}

}  // namespace graphsub::opt
