#include "ort/nchwc_padding.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "core/error.h"
#include "opt/match/graph_index.h"

namespace graphsub::ort {
namespace {

// Operators that act on each channel alone and map finite values to finite values, so the
// added channels hold finite values whatever the padding put there. Division is not one: a
// zero channel would divide.
bool per_channel_unary(const std::string& op) {
  static const std::set<std::string> ops{"relu",  "sigmoid",     "tanh",       "gelu",
                                         "relu6", "hardswish",   "silu",       "gelu_tanh",
                                         "clip",  "hardsigmoid", "leaky_relu", "identity"};
  return ops.count(op) != 0;
}
bool per_channel_binary(const std::string& op) {
  return op == "ewadd" || op == "ewmul" || op == "add" || op == "mul" || op == "sub";
}
bool is_conv(const std::string& op) {
  return op == "conv" || op == "conv_add";
}

int64_t round_up(int64_t c, int64_t b) {
  return (c + b - 1) / b * b;
}

// The axis of a constant of shape `s` that lines up with the channel axis of an NCHW tensor
// under numpy broadcasting, or -1 when it has none.
int channel_axis_of(const Shape& s) {
  return s.size() >= 3 ? static_cast<int>(s.size()) - 3 : -1;
}

struct Regions {
  const Graph& g;
  int block;
  std::vector<uint8_t> constant = opt::constant_nodes(g);
  std::vector<NodeId> parent;
  std::vector<uint8_t> image;     // node's output 0 is a non-constant fp32 NCHW tensor
  std::vector<uint8_t> joins;     // node keeps its inputs' channels: same region as them
  std::vector<uint8_t> paddable;  // node can write its output with added channels

  NodeId find(NodeId x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(NodeId a, NodeId b) {
    a = find(a), b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
  bool is_const(TensorRef r) const { return constant[r.node] != 0; }
  int64_t channels(NodeId id) const { return g.node(id).outputs[0].shape[1]; }

  int64_t groups_of(const Node& n) const {
    int64_t in_per_group = g.type(n.inputs[1]).shape[1];
    return in_per_group > 0 ? g.type(n.inputs[0]).shape[1] / in_per_group : 0;
  }
  bool constant_weights(const Node& n) const {
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (!(n.op->name == "conv_add" && i == 2) && !is_const(n.inputs[i])) return false;
    return true;
  }

  void classify(NodeId id) {
    const Node& n = g.node(id);
    if (n.is_source() || constant[id] || n.outputs.size() != 1) return;
    const TensorType& t = n.outputs[0];
    if (t.dtype != DType::F32 || t.shape.size() != 4) return;
    image[id] = 1;
    const std::string& op = n.op->name;
    int64_t c = t.shape[1];
    auto image_input = [&](TensorRef r) {
      return r.output == 0 && image[r.node] && g.type(r).shape[1] == c;
    };
    if (is_conv(op)) {
      if (!constant_weights(n)) return;
      int64_t groups = groups_of(n);
      if (groups == 1) {
        paddable[id] = 1;  // zero output channels
        if (op == "conv_add") {
          if (!image_input(n.inputs[2])) {
            paddable[id] = 0;
            return;
          }
          unite(id, n.inputs[2].node);
        }
        return;
      }
      // A grouped conv of as many channels out as in keeps the region (added groups).
      if (op == "conv" && image_input(n.inputs[0]) && g.type(n.inputs[1]).shape[0] == c) {
        joins[id] = paddable[id] = 1;
        unite(id, n.inputs[0].node);
      }
      return;
    }
    bool ok = false;
    if (per_channel_unary(op) || op == "poolmax" || op == "poolavg" || op == "global_avgpool") {
      ok = image_input(n.inputs[0]);
      for (size_t i = 1; i < n.inputs.size(); ++i) ok = ok && is_const(n.inputs[i]);
    } else if (op == "batchnorm") {
      ok = image_input(n.inputs[0]);
      for (size_t i = 1; i < n.inputs.size(); ++i)
        ok = ok && is_const(n.inputs[i]) && g.type(n.inputs[i]).shape == Shape{c};
    } else if (per_channel_binary(op)) {
      ok = true;
      for (const TensorRef& r : n.inputs) {
        if (is_const(r)) {
          const Shape& s = g.type(r).shape;
          int axis = channel_axis_of(s);
          ok = ok && s.size() <= 4 &&
               (axis < 0 || s[static_cast<size_t>(axis)] == 1 || s[static_cast<size_t>(axis)] == c);
        } else {
          ok = ok && image_input(r);
        }
      }
    }
    if (!ok) return;
    joins[id] = paddable[id] = 1;
    for (const TensorRef& r : n.inputs)
      if (!is_const(r)) unite(id, r.node);
  }

  void run() {
    parent.resize(g.num_slots());
    std::iota(parent.begin(), parent.end(), NodeId{0});
    image.assign(g.num_slots(), 0);
    joins.assign(g.num_slots(), 0);
    paddable.assign(g.num_slots(), 0);
    for (NodeId id : g.topo_order()) classify(id);
  }
};

// One region to pad: its tensors (node ids, output 0) and the channels added.
struct Region {
  std::vector<NodeId> tensors;
  int64_t channels = 0, added = 0;
};

// The regions whose channels are not a multiple of the block and whose every tensor can be
// written padded, in the order of their first tensor.
std::vector<Region> paddable_regions(Regions& r) {
  std::map<NodeId, Region> by_root;
  for (NodeId id = 0; id < r.g.num_slots(); ++id)
    if (r.g.alive(id) && r.image[id]) by_root[r.find(id)].tensors.push_back(id);
  std::vector<Region> out;
  for (auto& [root, reg] : by_root) {
    int64_t c = r.channels(reg.tensors[0]);
    reg.channels = c;
    reg.added = round_up(c, r.block) - c;
    // An aligned region is still worth a rewrite where its grouped convs have groups
    // narrower than a block (ResNeXt's 8 channels a group): their groups merged, nothing added.
    if (reg.added == 0 && std::none_of(reg.tensors.begin(), reg.tensors.end(), [&](NodeId id) {
          return r.joins[id] && r.g.node(id).op->name == "conv" &&
                 r.g.type(r.g.node(id).inputs[1]).shape[1] % r.block != 0;
        }))
      continue;
    bool ok = true;
    for (NodeId id : reg.tensors) {
      ok = ok && r.paddable[id];
      const Node& n = r.g.node(id);
      // Added groups need the added channels to be whole groups.
      if (ok && r.joins[id] && n.op->name == "conv")
        ok = reg.added % r.g.type(n.inputs[1]).shape[1] == 0;
    }
    if (ok) out.push_back(std::move(reg));
  }
  return out;
}

// Rewrites a copy of the graph with `chosen` regions padded.
class Padder {
 public:
  Padder(const Graph& g, const Regions& r, int block) : g_(g), r_(r), block_(block), h_(g) {}

  Graph apply(const std::vector<const Region*>& chosen) {
    std::vector<int64_t> added(g_.num_slots(), 0);
    std::vector<uint8_t> in_region(g_.num_slots(), 0);
    for (const Region* reg : chosen)
      for (NodeId id : reg->tensors) {
        added[id] = reg->added;
        in_region[id] = 1;
      }
    auto pad_of = [&](TensorRef t) { return t.output == 0 ? added[t.node] : 0; };
    std::vector<std::vector<NodeId>> consumers = g_.consumers();
    std::vector<NodeId> order = g_.topo_order();
    for (NodeId id : order) {
      const Node& n = g_.node(id);
      if (n.is_source() || r_.constant[id]) continue;
      std::vector<TensorRef> in = n.inputs;
      bool changed = false;
      const std::string& op = n.op->name;
      if (is_conv(op)) {
        int64_t p_in = pad_of(n.inputs[0]), p_out = added[id];
        TensorRef w = in[1];
        size_t bias = op == "conv_add" ? 3 : 2;
        if (r_.joins[id]) {  // grouped: added groups, then groups merged to a block's width
          if (in_region[id]) {
            if (p_out > 0) {
              w = pad_axis(w, 0, p_out, 0.0);
              if (in.size() > bias) in[bias] = pad_axis(in[bias], 0, p_out, 0.0);
            }
            w = merge_groups(w, g_.type(n.inputs[0]).shape[1] + p_in);
            changed = w != in[1];
          }
        } else {
          if (p_in > 0) w = pad_axis(w, 1, p_in, 0.0);
          if (p_out > 0) {
            w = pad_axis(w, 0, p_out, 0.0);
            if (in.size() > bias) in[bias] = pad_axis(in[bias], 0, p_out, 0.0);
          }
          changed = p_in > 0 || p_out > 0;
        }
        in[1] = w;
      } else if (added[id] > 0 && op == "batchnorm") {
        // scale, bias, mean 0 and variance 1 on the added channels: they stay finite.
        for (size_t i = 1; i < in.size(); ++i)
          in[i] = pad_axis(in[i], 0, added[id], i == 4 ? 1.0 : 0.0);
        changed = true;
      } else if (added[id] > 0 && per_channel_binary(op)) {
        for (size_t i = 0; i < in.size(); ++i) {
          if (!r_.constant[in[i].node]) continue;
          const Shape& s = g_.type(in[i]).shape;
          int axis = channel_axis_of(s);
          if (axis >= 0 && s[static_cast<size_t>(axis)] != 1) {
            in[i] = pad_axis(in[i], static_cast<size_t>(axis), added[id], 0.0);
            changed = true;
          }
        }
      }
      if (changed) h_.set_inputs(id, in);
    }
    // Readers that do not take the added channels read the tensor cut back.
    for (NodeId id : order) {
      if (added[id] == 0) continue;
      TensorRef t{id, 0};
      std::vector<NodeId> cut;
      for (NodeId c : consumers[id])
        if (!takes_padding(c, added)) cut.push_back(c);
      bool is_output = std::any_of(g_.outputs().begin(), g_.outputs().end(),
                                   [&](const GraphOutput& o) { return o.ref == t; });
      if (cut.empty() && !is_output) continue;
      int64_t c = g_.node(id).outputs[0].shape[1];
      TensorRef s{h_.add("slice", {t},
                         {{"starts", std::vector<int64_t>{0}},
                          {"ends", std::vector<int64_t>{c}},
                          {"axes", std::vector<int64_t>{1}},
                          {"steps", std::vector<int64_t>{1}}},
                         name_for(id, "nchwc_cut")),
                  0};
      h_.replace_uses(t, s, cut);
    }
    h_.infer_all();
    h_.compact();
    return std::move(h_);
  }

 private:
  // Whether node `c` reads every padded input of it with the added channels.
  bool takes_padding(NodeId c, const std::vector<int64_t>& added) const {
    const Node& n = g_.node(c);
    if (r_.joins[c] && added[c] > 0) return true;  // one region: padded alike
    if (is_conv(n.op->name) && !r_.joins[c]) {
      // The conv's input takes zero weights; a conv_add's residual is in its region.
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        TensorRef r = n.inputs[i];
        if (r.output != 0 || added[r.node] == 0) continue;
        if (i == 0 && r_.constant_weights(n) && r_.groups_of(n) == 1) continue;
        if (i == 2 && n.op->name == "conv_add" && added[c] > 0) continue;
        return false;
      }
      return true;
    }
    return false;
  }

  std::string name_for(NodeId id, const char* what) {
    const std::string& base = h_.node(id).name;
    return fmt::format("{}.{}{}", base.empty() ? fmt::format("n{}", id) : base, what, serial_++);
  }

  // `t` with `count` values of `value` added at the end of `axis`.
  TensorRef pad_axis(TensorRef t, size_t axis, int64_t count, double value) {
    size_t rank = h_.type(t).shape.size();
    std::vector<int64_t> pads(2 * rank, 0);
    pads[rank + axis] = count;
    return {h_.add("pad", {t}, {{"pads", pads}, {"value", value}}, name_for(t.node, "nchwc_pad")),
            0};
  }

  // A grouped conv's weight [C, c/g, kh, kw] over `in_channels` inputs, with as many
  // neighbouring groups merged as make a group a multiple of the block wide: block-diagonal,
  // each old group reading only its own inputs (what merge-group-convs builds for two).
  TensorRef merge_groups(TensorRef w, int64_t in_channels) {
    const Shape ws = h_.type(w).shape;
    int64_t cg = ws[1], groups = in_channels / cg, og = ws[0] / groups;
    if (cg == 1 || cg % block_ == 0 || block_ % cg != 0) return w;
    int64_t k = block_ / cg;
    if (groups % k != 0 || (og * k) % block_ != 0) return w;
    TensorType mask_type;
    mask_type.shape = {1, k, 1, k, 1, 1};
    std::vector<float> eye(static_cast<size_t>(k * k), 0.f);
    for (int64_t i = 0; i < k; ++i) eye[static_cast<size_t>(i * k + i)] = 1.f;
    TensorRef mask{h_.add_weight(name_for(w.node, "nchwc_group_mask"), mask_type,
                                 std::make_shared<const std::vector<float>>(std::move(eye))),
                   0};
    auto reshape = [&](TensorRef t, std::vector<int64_t> shape) {
      return TensorRef{h_.add("reshape", {t}, {{"shape", std::move(shape)}}), 0};
    };
    TensorRef w6 = reshape(w, {groups / k, k, og, 1, cg, ws[2] * ws[3]});
    TensorRef spread{h_.add("mul", {w6, mask}), 0};
    return reshape(spread, {ws[0], k * cg, ws[2], ws[3]});
  }

  const Graph& g_;
  const Regions& r_;
  int block_;
  Graph h_;
  int serial_ = 0;
};

// Whether `after` is the better layout: more convolutions blocked, or as many with fewer
// bytes reordered.
bool better(const NchwcLayout& after, const NchwcLayout& before) {
  if (after.blocked_convs != before.blocked_convs)
    return after.blocked_convs > before.blocked_convs;
  return after.reorder_mb < before.reorder_mb * 0.999;
}

}  // namespace

std::optional<ChannelPadding> pad_channels_for_nchwc(const Graph& g, int block) {
  if (block <= 0) return std::nullopt;
  Regions r{.g = g, .block = block};
  r.run();
  std::vector<Region> regions = paddable_regions(r);
  if (regions.empty()) return std::nullopt;
  NchwcLayout base = predict_nchwc(g, block);
  // Each region alone against the graph as given: padded where the layout gains by it.
  std::vector<const Region*> chosen;
  ChannelPadding out{.graph = g, .before = base, .after = base};
  for (const Region& reg : regions) {
    Graph one;
    try {
      one = Padder(g, r, block).apply({&reg});
    } catch (const Error&) {
      continue;  // a shape the padding cannot carry: the region stays as it is
    }
    if (!better(predict_nchwc(one, block), base)) continue;
    chosen.push_back(&reg);
  }
  if (chosen.empty()) return std::nullopt;
  out.graph = Padder(g, r, block).apply(chosen);
  out.after = predict_nchwc(out.graph, block);
  // One line per channel count: "440 -> 448 channels: 6 regions, 45 tensors, 22 convolutions".
  struct Tally {
    int regions = 0, convs = 0;
    size_t tensors = 0;
  };
  std::map<std::pair<int64_t, int64_t>, Tally> by_width;
  for (const Region* reg : chosen) {
    Tally& t = by_width[{reg->channels, reg->channels + reg->added}];
    ++t.regions;
    t.tensors += reg->tensors.size();
    for (NodeId id : reg->tensors) t.convs += is_conv(g.node(id).op->name) ? 1 : 0;
  }
  for (const auto& [w, t] : by_width)
    out.regions.push_back(fmt::format("{} channels: {} region{}, {} tensors, {} convolutions",
                                      w.first == w.second
                                          ? fmt::format("{} (groups merged)", w.first)
                                          : fmt::format("{} -> {}", w.first, w.second),
                                      t.regions, t.regions == 1 ? "" : "s", t.tensors, t.convs));
  return out;
}

}  // namespace graphsub::ort
