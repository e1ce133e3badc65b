// merge-group-convs: a convolution with g groups (g even) becomes one with g/2 groups whose
// weight is block-diagonal: each new group holds two old groups, each reading only its own
// half of the input channels. More arithmetic, but fewer, wider groups run far better on
// most kernels (TASO's ResNeXt gain). The weight expression (reshape, multiply by a 0/1 mask,
// reshape) reads only weights, so it costs nothing and is computed ahead of run time.
#include <fmt/format.h>

#include "core/error.h"
#include "opt/application_price.h"
#include "opt/builtin_transform.h"
#include "opt/rewrite.h"
#include "opt/structural_rules.h"

namespace graphsub::opt {
namespace {

class MergeGroupConvs : public PricedBuiltinTransform {
 public:
  MergeGroupConvs() : PricedBuiltinTransform("merge-group-convs") {}

 protected:
  void run(const GraphIndex& ix, const Pricing* pricing, const EmitFn& emit) const override {
    const Graph& g = ix.graph();
    ScratchGraph scratch;  // the parent plus the application being priced
    PriceBuffers buf;
    size_t ordinal = 0;
    for (NodeId c : ix.nodes_of("conv")) {
      ConvShape s = conv_shape(g, c);
      if (s.groups < 2 || s.groups % 2 != 0 || !ix.constant(g.node(c).inputs[1])) continue;
      size_t my_ordinal = ordinal;
      if (pricing) {
        std::optional<double> price = price_on_scratch(scratch, g, [&](Graph& sg, NodeId first) {
          // The mask's data and name do not change the price (weights cost nothing).
          TensorRef mask{sg.add_weight("group_mask", mask_type()), 0};
          TensorRef conv = build(sg, g.node(c), s, mask);
          return price_application(ix, sg, first, {{{c, 0}, conv}}, {c}, *pricing, buf);
        });
        if (!price) continue;
        ++ordinal;
        if (!pricing->admit(*price)) continue;
      }
      try {
        auto out = merge(g, c, s);
        if (!out) continue;
        if (!pricing) ++ordinal;
        emit({std::move(*out),
              fmt::format("{} ({} -> {} groups)", node_label(g, c), s.groups, s.groups / 2),
              my_ordinal, pricing != nullptr});
      } catch (const Error&) {  // does not type-check: not an application
      }
    }
  }

  static TensorType mask_type() {
    TensorType t;
    t.shape = {1, 2, 1, 2, 1, 1};
    return t;
  }

  // The merged conv reading `mask` [1, 2, 1, 2, 1, 1], added to `h`:
  // w [O, I/g, kh, kw] -> [g/2, 2, O/g, 1, I/g, kh*kw] * mask (identity on the two "2" axes)
  // -> [O, 2I/g, kh, kw]: old group 2j+a lands in new group j, input half a.
  static TensorRef build(Graph& h, const Node& n, const ConvShape& s, TensorRef mask) {
    TensorRef w = n.inputs[1];
    const Shape ws = h.type(w).shape;
    int64_t out_per_group = ws[0] / s.groups, in_per_group = ws[1], taps = ws[2] * ws[3];
    auto reshape = [&](TensorRef t, std::vector<int64_t> shape) {
      return TensorRef{h.add("reshape", {t}, {{"shape", std::move(shape)}}), 0};
    };
    TensorRef w6 = reshape(w, {s.groups / 2, 2, out_per_group, 1, in_per_group, taps});
    TensorRef spread{h.add("mul", {w6, mask}), 0};
    TensorRef merged_w = reshape(spread, {ws[0], 2 * in_per_group, ws[2], ws[3]});
    std::vector<TensorRef> ins = n.inputs;
    ins[1] = merged_w;
    return {h.add(*n.op, ins, n.attrs, n.name), 0};
  }

  static std::optional<Graph> merge(const Graph& g, NodeId c, const ConvShape& s) {
    const Node& n = g.node(c);
    TensorRef w = n.inputs[1];
    Rewrite rw(g);
    std::string base = g.node(w.node).name.empty() ? fmt::format("conv{}", c) : g.node(w.node).name;
    TensorRef mask = rw.add_weight(base + ".group_mask", mask_type(), {1, 0, 0, 1});
    TensorRef conv = build(rw.graph(), n, s, mask);
    return std::move(rw).finish({{{c, 0}, conv}});
  }
};

}  // namespace

std::unique_ptr<Transform> make_merge_group_convs() {
  return std::make_unique<MergeGroupConvs>();
}

}  // namespace graphsub::opt
