// merge-convs: two convolutions reading the same input with the same stride, dilation,
// activation and (after centring) padding become one convolution over the concatenated
// weights, followed by a split of its output channels. Kernels of different sizes are first
// enlarged (zero-padded, centred) to the larger size, as TASO's enlarge rule does; 1x1 with
// 3x3 is the common case. The weight expressions are constant and cost nothing.
#include <fmt/format.h>

#include <algorithm>

#include "opt/transforms/builtin_transform.h"
#include "opt/transforms/structural_rules.h"

namespace graphsub::opt {
namespace {

struct Plan {
  int64_t kh = 0, kw = 0;     // common kernel
  std::vector<int64_t> pads;  // common pads
};

// The pads conv `c` needs once its kernel is enlarged to kh x kw, or empty when enlarging
// cannot keep it centred.
std::vector<int64_t> enlarged_pads(const Graph& g, NodeId c, int64_t kh, int64_t kw) {
  ConvShape s = conv_shape(g, c);
  if ((kh - s.kh) % 2 != 0 || (kw - s.kw) % 2 != 0) return {};
  auto p = g.node(c).attrs.ints("pads");
  int64_t dh = (kh - s.kh) / 2, dw = (kw - s.kw) / 2;
  return {p[0] + dh, p[1] + dw, p[2] + dh, p[3] + dw};
}

std::optional<Plan> plan(const GraphIndex& ix, NodeId a, NodeId b) {
  const Graph& g = ix.graph();
  const Node &na = g.node(a), &nb = g.node(b);
  ConvShape sa = conv_shape(g, a), sb = conv_shape(g, b);
  if (sa.groups != 1 || sb.groups != 1 || sa.has_bias != sb.has_bias) return std::nullopt;
  for (const char* attr : {"stride", "dilations"})
    if (na.attrs.ints(attr) != nb.attrs.ints(attr)) return std::nullopt;
  if (na.attrs.ints("dilations") != std::vector<int64_t>{1, 1}) return std::nullopt;
  if (na.attrs.s("act") != nb.attrs.s("act")) return std::nullopt;
  for (size_t i = 1; i < na.inputs.size(); ++i)
    if (!ix.constant(na.inputs[i]) || !ix.constant(nb.inputs[i])) return std::nullopt;
  Plan p{std::max(sa.kh, sb.kh), std::max(sa.kw, sb.kw), {}};
  auto pa = enlarged_pads(g, a, p.kh, p.kw), pb = enlarged_pads(g, b, p.kh, p.kw);
  if (pa.empty() || pa != pb) return std::nullopt;
  p.pads = pa;
  return p;
}

// A match: outputs = {a's output, b's output} (a < b), internal = {a, b}.
class MergeConvs : public BuiltinTransform {
 public:
  MergeConvs() : BuiltinTransform("merge-convs") {}

  size_t find(const GraphIndex& ix, std::vector<Match>& out) const override {
    const Graph& g = ix.graph();
    // (data input, conv) for every conv: sorted, the convs reading one tensor are adjacent
    // and ascending, and tensors come in ascending order.
    std::vector<std::pair<TensorRef, NodeId>> readers;
    for (NodeId c : ix.nodes_of("conv")) readers.push_back({g.node(c).inputs[0], c});
    std::sort(readers.begin(), readers.end());
    size_t count = 0;
    for (size_t lo = 0, hi = 0; lo < readers.size(); lo = hi) {
      for (hi = lo + 1; hi < readers.size() && readers[hi].first == readers[lo].first; ++hi) {
      }
      for (size_t i = lo; i < hi; ++i)
        for (size_t j = i + 1; j < hi; ++j) {
          NodeId a = readers[i].second, b = readers[j].second;
          if (!plan(ix, a, b)) continue;
          Match& m = next_match(out, count);
          m.outputs = {TensorRef{a, 0}, TensorRef{b, 0}};
          m.internal = {a, b};
        }
    }
    return count;
  }

  // The merged conv (enlarged and concatenated weights) and the split of its output.
  Outcome apply(const GraphIndex& ix, const Match& m, Builder& rb) const override {
    const Graph& g = ix.graph();
    NodeId a = m.internal[0], b = m.internal[1];
    const Plan p = *plan(ix, a, b);
    Graph& h = rb.graph();
    Result<NodeId> split = type_checked([&] {
      auto weight = [&](NodeId c) {
        TensorRef w = g.node(c).inputs[1];
        ConvShape s = conv_shape(g, c);
        if (s.kh == p.kh && s.kw == p.kw) return w;
        return TensorRef{h.add("enlarge", {w}, {{"kernel", std::vector<int64_t>{p.kh, p.kw}}}), 0};
      };
      const Node& na = g.node(a);
      std::vector<TensorRef> ins = {na.inputs[0]};
      ins.push_back({h.add("concat", {weight(a), weight(b)}, {{"axis", int64_t{0}}}), 0});
      if (na.inputs.size() > 2)
        ins.push_back(
            {h.add("concat", {na.inputs[2], g.node(b).inputs[2]}, {{"axis", int64_t{0}}}), 0});
      Attrs attrs = na.attrs;
      attrs.set("pads", p.pads);
      TensorRef merged{h.add(*na.op, ins, attrs), 0};
      return h.add("split", {merged}, {{"axis", int64_t{1}}});
    });
    if (!split) return split.failure();
    rb.replace({a, 0}, {*split, 0});
    rb.replace({b, 0}, {*split, 1});
    return Applied{};
  }

  std::string where(const GraphIndex& ix, const Match& m) const override {
    return fmt::format("{} with {}", node_label(ix.graph(), m.internal[0]),
                       node_label(ix.graph(), m.internal[1]));
  }
};

}  // namespace

std::unique_ptr<Transform> make_merge_convs() {
  return std::make_unique<MergeConvs>();
}

}  // namespace graphsub::opt
