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
  int block;  // what channels are rounded to and groups merged to: a multiple of every block
  std::vector<uint8_t> constant = opt::constant_nodes(g);
  std::vector<NodeId> parent;
  std::vector<uint8_t> image;     // node's output 0 is a non-constant fp32 NCHW tensor
  std::vector<uint8_t> joins;     // node keeps its inputs' channels: same region as them
  std::vector<uint8_t> paddable;  // node can write its output with added channels
  std::vector<uint8_t> concat;    // node concatenates image tensors along the channels

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
    if (op == "concat") {
      // Its own region: its channels are its inputs' side by side, padded as theirs are.
      if (n.attrs.i("axis") != 1) return;
      for (const TensorRef& r : n.inputs)
        if (is_const(r) || r.output != 0 || !image[r.node]) return;
      concat[id] = paddable[id] = 1;
      return;
    }
    bool ok = false;
    if (op == "reduce_mean") {  // a squeeze-excitation's mean over the image, per channel
      const auto& axes = n.attrs.ints("axes");
      std::set<int64_t> over;
      for (int64_t a : axes) over.insert(a < 0 ? a + 4 : a);
      ok =
          image_input(n.inputs[0]) && n.attrs.i("keepdims") == 1 && over == std::set<int64_t>{2, 3};
    } else if (per_channel_unary(op) || op == "poolmax" || op == "poolavg" ||
               op == "global_avgpool") {
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
    concat.assign(g.num_slots(), 0);
    for (NodeId id : g.topo_order()) classify(id);
  }
};

// Where the channels of a padded tensor sit: channel c at pos[c] of `width`; the other
// positions hold finite values that no result reads. Padded at the end, pos is 0..C-1; a
// concatenation of padded tensors has its inputs' padding between its parts.
struct ChannelMap {
  int64_t width = 0;
  std::vector<int64_t> pos;

  static ChannelMap at_end(int64_t channels, int64_t width) {
    ChannelMap m{.width = width, .pos = std::vector<int64_t>(static_cast<size_t>(channels))};
    std::iota(m.pos.begin(), m.pos.end(), int64_t{0});
    return m;
  }
  int64_t channels() const { return static_cast<int64_t>(pos.size()); }
  bool at_end() const { return pos.empty() || pos.back() == channels() - 1; }
  // Maximal runs of channels at consecutive positions: (first channel, position, length).
  struct Run {
    int64_t channel, position, length;
  };
  std::vector<Run> runs() const {
    std::vector<Run> out;
    for (int64_t c = 0; c < channels(); ++c) {
      auto i = static_cast<size_t>(c);
      if (!out.empty() && out.back().position + out.back().length == pos[i])
        ++out.back().length;
      else
        out.push_back({c, pos[i], 1});
    }
    return out;
  }
  friend bool operator==(const ChannelMap&, const ChannelMap&) = default;
};

// One region to pad: its tensors (node ids, output 0), how its channels are laid out padded,
// and the regions that must be padded with it (those its concatenations read).
struct Region {
  std::vector<NodeId> tensors;
  int64_t channels = 0;
  ChannelMap map;
  std::vector<size_t> needs;
  int64_t added() const { return map.width - channels; }
};

// Whether every tensor of `reg` can be written with its map.
bool region_can_pad(const Regions& r, const Region& reg) {
  for (NodeId id : reg.tensors) {
    if (!r.paddable[id]) return false;
    const Node& n = r.g.node(id);
    if (!r.joins[id] || n.op->name != "conv") continue;
    // Added groups need the added channels to be whole groups; between a concatenation's
    // parts only a depthwise conv's groups (one channel each) can be added.
    int64_t per_group = r.g.type(n.inputs[1]).shape[1];
    if (reg.added() % per_group != 0 || (!reg.map.at_end() && per_group != 1)) return false;
  }
  return true;
}

// The regions whose channels are not a multiple of the block and whose every tensor can be
// written padded, in the order of their first tensor; then the regions written by
// concatenations of such regions, which become aligned where their parts are.
std::vector<Region> paddable_regions(Regions& r) {
  std::map<NodeId, Region> by_root;
  for (NodeId id = 0; id < r.g.num_slots(); ++id)
    if (r.g.alive(id) && r.image[id]) by_root[r.find(id)].tensors.push_back(id);
  std::vector<Region> out;
  std::map<NodeId, size_t> index_of_root;
  std::vector<Region*> concatenated;
  for (auto& [root, reg] : by_root) {
    int64_t c = r.channels(reg.tensors[0]);
    reg.channels = c;
    reg.map = ChannelMap::at_end(c, round_up(c, r.block));
    if (std::any_of(reg.tensors.begin(), reg.tensors.end(),
                    [&](NodeId id) { return r.concat[id] != 0; })) {
      concatenated.push_back(&reg);
      continue;
    }
    // An aligned region is still worth a rewrite where its grouped convs have groups
    // narrower than a block (ResNeXt's 8 channels a group): their groups merged, nothing added.
    if (reg.added() == 0 && std::none_of(reg.tensors.begin(), reg.tensors.end(), [&](NodeId id) {
          return r.joins[id] && r.g.node(id).op->name == "conv" &&
                 r.g.type(r.g.node(id).inputs[1]).shape[1] % r.block != 0;
        }))
      continue;
    if (!region_can_pad(r, reg)) continue;
    index_of_root[root] = out.size();
    out.push_back(std::move(reg));
  }
  // A concatenation of unaligned parts (GhostNet's two halves of 20 channels) leaves the
  // layout; with each part padded to a block it stays in it, its parts' padding between them.
  // Every concatenation writing one region must lay it out alike.
  for (Region* reg : concatenated) {
    std::optional<ChannelMap> map;
    std::set<size_t> needs;
    bool ok = true;
    for (NodeId id : reg->tensors) {
      if (!r.concat[id] || !ok) continue;
      ChannelMap m;
      for (const TensorRef& part : r.g.node(id).inputs) {
        int64_t c = r.g.type(part).shape[1];
        auto it = index_of_root.find(r.find(part.node));
        int64_t width = c;
        // A part padded by more than half its channels (GhostNet's first block: 8 -> 16 at
        // 112 x 112) makes every pass over it cost more than the reorders it saves: measured
        // 0.25 ms slower there, where parts padded by a fifth to a third gained.
        if (it != index_of_root.end() && out[it->second].map.at_end() &&
            2 * out[it->second].added() <= c) {
          width = out[it->second].map.width;
          needs.insert(it->second);
        } else if (c % r.block != 0) {
          ok = false;
          break;
        }
        for (int64_t k = 0; k < c; ++k) m.pos.push_back(m.width + k);
        m.width += width;
      }
      if (ok && map && !(*map == m)) ok = false;
      if (ok) map = std::move(m);
    }
    if (!ok || !map || map->width == reg->channels) continue;
    reg->map = std::move(*map);
    reg->needs.assign(needs.begin(), needs.end());
    if (!region_can_pad(r, *reg)) continue;
    out.push_back(std::move(*reg));
  }
  return out;
}

// Rewrites a copy of the graph with `chosen` regions padded.
class Padder {
 public:
  Padder(const Graph& g, const Regions& r, int block) : g_(g), r_(r), block_(block), h_(g) {}

  Graph apply(const std::vector<const Region*>& chosen) {
    map_of_.assign(g_.num_slots(), nullptr);
    for (const Region* reg : chosen)
      for (NodeId id : reg->tensors) map_of_[id] = &reg->map;
    std::vector<std::vector<NodeId>> consumers = g_.consumers();
    std::vector<NodeId> order = g_.topo_order();
    for (NodeId id : order) {
      const Node& n = g_.node(id);
      if (n.is_source() || r_.constant[id]) continue;
      std::vector<TensorRef> in = n.inputs;
      bool changed = false;
      const std::string& op = n.op->name;
      const ChannelMap* out_map = map_of_[id];
      if (is_conv(op)) {
        const ChannelMap* in_map = map_of(n.inputs[0]);
        TensorRef w = in[1];
        size_t bias = op == "conv_add" ? 3 : 2;
        auto write_padded = [&] {
          w = spread(w, 0, *out_map, 0.0);
          if (in.size() > bias) in[bias] = spread(in[bias], 0, *out_map, 0.0);
        };
        if (r_.joins[id]) {  // grouped: added groups, then groups merged to a block's width
          if (out_map) {
            write_padded();
            w = merge_groups(w, out_map->width);
          }
        } else {
          if (in_map) w = spread(w, 1, *in_map, 0.0);
          if (out_map) write_padded();
        }
        changed = w != in[1];
        in[1] = w;
      } else if (out_map && op == "batchnorm") {
        // scale, bias, mean 0 and variance 1 on the added channels: they stay finite.
        for (size_t i = 1; i < in.size(); ++i)
          in[i] = spread(in[i], 0, *out_map, i == 4 ? 1.0 : 0.0);
        changed = true;
      } else if (out_map && per_channel_binary(op)) {
        for (size_t i = 0; i < in.size(); ++i) {
          if (!r_.constant[in[i].node]) continue;
          const Shape& s = g_.type(in[i]).shape;
          int axis = channel_axis_of(s);
          if (axis >= 0 && s[static_cast<size_t>(axis)] != 1) {
            in[i] = spread(in[i], static_cast<size_t>(axis), *out_map, 0.0);
            changed = true;
          }
        }
      }
      if (changed) h_.set_inputs(id, in);
    }
    // Readers that do not take the added channels read the tensor cut back.
    for (NodeId id : order) {
      if (!map_of_[id]) continue;
      TensorRef t{id, 0};
      std::vector<NodeId> cut;
      for (NodeId c : consumers[id])
        if (!takes_padding(c)) cut.push_back(c);
      bool is_output = std::any_of(g_.outputs().begin(), g_.outputs().end(),
                                   [&](const GraphOutput& o) { return o.ref == t; });
      if (cut.empty() && !is_output) continue;
      h_.replace_uses(t, gather_channels(t, *map_of_[id]), cut);
    }
    h_.infer_all();
    h_.compact();
    return std::move(h_);
  }

 private:
  const ChannelMap* map_of(TensorRef t) const { return t.output == 0 ? map_of_[t.node] : nullptr; }

  // Whether node `c` reads every padded input of it with the added channels.
  bool takes_padding(NodeId c) const {
    const Node& n = g_.node(c);
    if ((r_.joins[c] || r_.concat[c]) && map_of_[c]) return true;  // padded as its region is
    if (is_conv(n.op->name) && !r_.joins[c]) {
      // The conv's input takes zero weights; a conv_add's residual is in its region.
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        TensorRef r = n.inputs[i];
        if (!map_of(r)) continue;
        if (i == 0 && r_.constant_weights(n) && r_.groups_of(n) == 1) continue;
        if (i == 2 && n.op->name == "conv_add" && map_of_[c]) continue;
        return false;
      }
      return true;
    }
    return false;
  }

  // The channels of padded tensor `t` in their order, without the padding: a Slice per run
  // of channels at consecutive positions, concatenated where there are several.
  TensorRef gather_channels(TensorRef t, const ChannelMap& m) {
    std::vector<TensorRef> parts;
    for (const ChannelMap::Run& run : m.runs())
      parts.push_back(slice_axis(t, 1, run.position, run.length, "nchwc_cut"));
    if (parts.size() == 1) return parts[0];
    return {h_.add("concat", parts, {{"axis", int64_t{1}}}, name_for(t.node, "nchwc_cut")), 0};
  }

  // `t` with its `axis` laid out as `m` says, `value` in the added places: padded at the end,
  // or cut into runs, each padded in front to its position, and concatenated.
  TensorRef spread(TensorRef t, size_t axis, const ChannelMap& m, double value) {
    if (m.at_end())
      return m.width == m.channels() ? t : pad_axis(t, axis, 0, m.width - m.channels(), value);
    std::vector<TensorRef> parts;
    int64_t placed = 0;
    for (const ChannelMap::Run& run : m.runs()) {
      TensorRef part = slice_axis(t, axis, run.channel, run.length, "nchwc_part");
      parts.push_back(pad_axis(part, axis, run.position - placed, 0, value));
      placed = run.position + run.length;
    }
    parts.back() = pad_axis(parts.back(), axis, 0, m.width - placed, value);
    return {h_.add("concat", parts, {{"axis", static_cast<int64_t>(axis)}},
                   name_for(t.node, "nchwc_spread")),
            0};
  }

  std::string name_for(NodeId id, const char* what) {
    const std::string& base = h_.node(id).name;
    return fmt::format("{}.{}{}", base.empty() ? fmt::format("n{}", id) : base, what, serial_++);
  }

  // `length` entries of `t` along `axis` from `begin`.
  TensorRef slice_axis(TensorRef t, size_t axis, int64_t begin, int64_t length, const char* what) {
    return {h_.add("slice", {t},
                   {{"starts", std::vector<int64_t>{begin}},
                    {"ends", std::vector<int64_t>{begin + length}},
                    {"axes", std::vector<int64_t>{static_cast<int64_t>(axis)}},
                    {"steps", std::vector<int64_t>{1}}},
                   name_for(t.node, what)),
            0};
  }

  // `t` with `before` and `after` values of `value` added around `axis` (`t` where none).
  TensorRef pad_axis(TensorRef t, size_t axis, int64_t before, int64_t after, double value) {
    if (before == 0 && after == 0) return t;
    size_t rank = h_.type(t).shape.size();
    std::vector<int64_t> pads(2 * rank, 0);
    pads[axis] = before;
    pads[rank + axis] = after;
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
  std::vector<const ChannelMap*> map_of_;  // per node slot: output 0's layout, where padded
};

// "440 -> 448", or "64 (groups merged)" where nothing is added.
std::string width_text(int64_t channels, int64_t width) {
  return channels == width ? fmt::format("{} (groups merged)", channels)
                           : fmt::format("{} -> {}", channels, width);
}

// Whether `after` is the better layout: more convolutions blocked, or as many with fewer
// bytes reordered.
bool better(const NchwcLayout& after, const NchwcLayout& before) {
  if (after.blocked_convs != before.blocked_convs)
    return after.blocked_convs > before.blocked_convs;
  return after.reorder_mb < before.reorder_mb * 0.999;
}

}  // namespace

int other_nchwc_block(int block) {
  return block == 16 ? 8 : block == 8 ? 16 : 0;
}

std::optional<ChannelPadding> pad_channels_for_nchwc(const Graph& g, int block) {
  if (block <= 0) return std::nullopt;
  int other = other_nchwc_block(block);
  // Channels are rounded, and groups merged, to the larger of the two block sizes, a whole
  // number of blocks of either: a file padded on an AVX2 machine then gains where it runs
  // at block 16 too (groups of 4 merged into 8 would not).
  int unit = std::max(block, other);
  Regions r{.g = g, .block = unit};
  r.run();
  std::vector<Region> regions = paddable_regions(r);
  if (regions.empty()) return std::nullopt;
  NchwcLayout base = predict_nchwc(g, block);
  NchwcLayout other_base = predict_nchwc(g, other);
  // Each region alone (with the regions its concatenations need) against the graph as given:
  // padded where the layout gains by it, at this machine's block and at the other one. A
  // region that gains here only is left out, and named: what the padding adds is arithmetic
  // that the other block size does not pay back.
  std::set<size_t> picked;
  std::set<size_t> left_out;
  ChannelPadding out{.graph = g,
                     .before = base,
                     .after = base,
                     .other_block = other,
                     .other_before = other_base,
                     .other_after = other_base};
  for (size_t i = 0; i < regions.size(); ++i) {
    std::vector<const Region*> with{&regions[i]};
    for (size_t k : regions[i].needs) with.push_back(&regions[k]);
    Graph one;
    try {
      one = Padder(g, r, unit).apply(with);
    } catch (const Error&) {
      continue;  // a shape the padding cannot carry: the region stays as it is
    }
    if (!better(predict_nchwc(one, block), base)) continue;
    if (other > 0 && !better(predict_nchwc(one, other), other_base)) {
      left_out.insert(i);
      continue;
    }
    picked.insert(i);
    picked.insert(regions[i].needs.begin(), regions[i].needs.end());
  }
  // By width; a region padded anyway, as a part of a concatenation that gains at both sizes,
  // is not left out.
  std::map<std::pair<int64_t, int64_t>, int> left_by_width;
  for (size_t i : left_out)
    if (!picked.count(i)) ++left_by_width[{regions[i].channels, regions[i].map.width}];
  for (const auto& [w, n] : left_by_width)
    out.left_out.push_back(fmt::format(
        "{} channels, {} region{}: gains at block {} only (at block {} it blocks no more "
        "convolutions and copies no fewer bytes)",
        width_text(w.first, w.second), n, n == 1 ? "" : "s", block, other));
  if (picked.empty() && out.left_out.empty()) return std::nullopt;
  if (picked.empty()) return out;  // the graph as given, with the regions left out named
  std::vector<const Region*> chosen;
  for (size_t i : picked) chosen.push_back(&regions[i]);
  out.graph = Padder(g, r, unit).apply(chosen);
  out.after = predict_nchwc(out.graph, block);
  out.other_after = predict_nchwc(out.graph, other);
  // One line per channel count: "440 -> 448 channels: 6 regions, 45 tensors, 22 convolutions".
  struct Tally {
    int regions = 0, convs = 0;
    size_t tensors = 0;
  };
  std::map<std::pair<int64_t, int64_t>, Tally> by_width;
  for (const Region* reg : chosen) {
    Tally& t = by_width[{reg->channels, reg->map.width}];
    ++t.regions;
    t.tensors += reg->tensors.size();
    for (NodeId id : reg->tensors) t.convs += is_conv(g.node(id).op->name) ? 1 : 0;
  }
  for (const auto& [w, t] : by_width)
    out.regions.push_back(fmt::format("{} channels: {} region{}, {} tensors, {} convolutions",
                                      width_text(w.first, w.second), t.regions,
                                      t.regions == 1 ? "" : "s", t.tensors, t.convs));
  return out;
}

}  // namespace graphsub::ort
