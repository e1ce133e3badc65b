// merge-duplicates: two operators of the same kind, with equal attributes, reading the same
// tensors compute the same values (every operator here is a function of its inputs; opaque
// ONNX operators, whose semantics are unknown, are left alone). The readers of the later one
// read the earlier one's outputs instead, and the later one is dropped. One application
// merges every such pair, following chains: once two nodes are one, their readers may be
// duplicates too. NasNet-A, after TASO's model, averages `prev` twice in every normal cell.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "opt/transforms/builtin_transform.h"
#include "opt/transforms/structural_rules.h"

namespace graphsub::opt {
namespace {

// The one match: outputs[i] (a dropped operator's output) is replaced by vars[i] (its twin's);
// internal = the dropped operators.
class MergeDuplicates : public BuiltinTransform {
 public:
  MergeDuplicates() : BuiltinTransform("merge-duplicates") {}

  size_t find(const GraphIndex& ix, std::vector<Match>& out) const override {
    const Graph& g = ix.graph();
    std::map<TensorRef, TensorRef> rep;  // a merged tensor -> the one that stays
    auto rep_of = [&](TensorRef t) {
      auto it = rep.find(t);
      return it == rep.end() ? t : it->second;
    };
    // Kept operators by (operator, inputs after merging), in topological order.
    std::map<std::pair<const OpDef*, std::vector<TensorRef>>, std::vector<NodeId>> kept;
    size_t count = 0;
    Match* m = nullptr;
    for (NodeId id : g.topo_order()) {
      const Node& n = g.node(id);
      if (n.is_source() || n.op->name == "opaque") continue;
      std::vector<TensorRef> ins;
      for (TensorRef t : n.inputs) ins.push_back(rep_of(t));
      std::vector<NodeId>& same = kept[{n.op, std::move(ins)}];
      const NodeId* twin = nullptr;
      for (const NodeId& k : same)
        if (g.node(k).attrs == n.attrs && g.node(k).outputs == n.outputs) twin = &k;
      if (!twin) {
        same.push_back(id);
        continue;
      }
      if (!m) m = &next_match(out, count);
      for (uint32_t o = 0; o < n.outputs.size(); ++o) {
        rep[{id, o}] = {*twin, o};
        m->outputs.push_back({id, o});
        m->vars.push_back({*twin, o});
      }
      m->internal.push_back(id);
    }
    if (m) std::sort(m->internal.begin(), m->internal.end());
    return count;
  }

  Outcome apply(const GraphIndex&, const Match& m, Builder& b) const override {
    for (size_t i = 0; i < m.outputs.size(); ++i) b.replace(m.outputs[i], m.vars[i]);
    return Applied{};
  }

  std::string where(const GraphIndex& ix, const Match& m) const override {
    std::map<std::string, size_t> merged;  // by operator
    for (NodeId id : m.internal) ++merged[ix.graph().node(id).op->name];
    std::vector<std::string> parts;
    for (auto& [op, count] : merged) parts.push_back(fmt::format("{} x{}", op, count));
    return fmt::format("{} duplicate operators ({})", m.internal.size(), fmt::join(parts, ", "));
  }
};

}  // namespace

std::unique_ptr<Transform> make_merge_duplicates() {
  return std::make_unique<MergeDuplicates>();
}

}  // namespace graphsub::opt
