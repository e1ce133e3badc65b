#include "ort/nchwc_layout.h"

#include <fmt/format.h>

#include <algorithm>

#include "opt/match/graph_index.h"

namespace graphsub::ort {
namespace {

// ONNX Runtime 1.31 blocks a depthwise or ungrouped convolution whose channels are a multiple
// of 4, padding them to the block (measured: 12, 20, 36, 104, 440 input channels run blocked
// at block 16; 18, 26, 30, 110 do not). Grouped ones still need whole blocks per group.
constexpr int64_t kChannelQuantum = 4;

bool is_image(const TensorType& t) {
  return t.dtype == DType::F32 && t.shape.size() == 4;
}

double megabytes(const TensorType& t) {
  return static_cast<double>(t.numel()) * 4 / 1e6;
}

// Activations ONNX Runtime fuses into the convolution before its layout pass (FusedConv),
// and the ones its layout pass carries on any blocked input.
bool fused_into_conv(const std::string& op) {
  return op == "relu" || op == "sigmoid" || op == "tanh" || op == "leaky_relu" || op == "clip" ||
         op == "relu6" || op == "hardsigmoid";
}
bool carried_activation(const std::string& op) {
  // silu is written as Sigmoid and a Mul of equal shapes: both carried.
  return op == "relu" || op == "sigmoid" || op == "tanh" || op == "silu";
}
// A conv's `act` attribute as written after it: carried (or fused) by the layout, or not.
bool act_keeps_layout(const std::string& act) {
  return act == "none" || fused_into_conv(act) || carried_activation(act);
}

struct Predictor {
  const Graph& g;
  int block;
  std::vector<uint8_t> constant = opt::constant_nodes(g);
  std::vector<std::vector<NodeId>> consumers = g.consumers();
  NchwcLayout out;
  // Per node slot: which of its inputs it reads in the blocked layout (a Concat may have
  // dozens: DenseNet's).
  std::vector<std::vector<uint8_t>> reads;

  bool blocked(TensorRef r) const { return r.output == 0 && out.blocked[r.node]; }
  bool is_const(TensorRef r) const { return constant[r.node] != 0; }

  // A conv (or conv_add) node's fit, or blocked = false when it is not an fp32 image conv
  // with constant weights.
  NchwcConvFit conv_fit(const Node& n) const {
    const TensorType& x = g.type(n.inputs[0]);
    const TensorType& w = g.type(n.inputs[1]);
    if (!is_image(x) || w.shape.size() != 4 || !is_const(n.inputs[1])) return {};
    for (size_t i = 2; i < n.inputs.size(); ++i)
      if (!is_const(n.inputs[i]) && !(n.op->name == "conv_add" && i == 2)) return {};
    int64_t groups = w.shape[1] > 0 ? x.shape[1] / w.shape[1] : 0;
    if (groups <= 0) return {};
    return nchwc_conv_fit(w.shape[0], w.shape[1], groups, block);
  }

  // Decides node `id`'s layout; reads[id] says which inputs it reads blocked.
  void decide(NodeId id) {
    const Node& n = g.node(id);
    const std::string& op = n.op->name;
    auto all_blocked_same = [&]() {
      for (const TensorRef& r : n.inputs)
        if (is_const(r) || !blocked(r) || g.type(r).shape != g.type(n.inputs[0]).shape)
          return false;
      return !n.inputs.empty();
    };
    reads[id].assign(n.inputs.size(), 0);
    auto read_all = [&]() { reads[id].assign(n.inputs.size(), 1); };
    if (op == "conv" || op == "conv_add") {
      NchwcConvFit fit = conv_fit(n);
      if (!fit.blocked) {
        ++out.plain_convs;
        return;
      }
      ++out.blocked_convs;
      if (fit.reads_blocked) reads[id][0] = 1;
      bool sum_blocked = true;
      if (op == "conv_add") {  // Conv, then Add of the residual (input 2)
        TensorRef r = n.inputs[2];
        sum_blocked = blocked(r) && g.type(r).shape == n.outputs[0].shape;
        if (sum_blocked) reads[id][2] = 1;
      }
      const std::string& act = n.attrs.s("act");
      if (sum_blocked && act_keeps_layout(act)) {
        out.blocked[id] = 1;
        return;
      }
      // The conv's own output (or the sum) is reordered back for what follows it.
      ++out.reorder_outputs;
      out.reorder_mb += megabytes(n.outputs[0]);
      return;
    }
    if (n.inputs.empty() || !is_image(g.type(n.inputs[0])) || n.outputs.size() != 1) return;
    int64_t channels = g.type(n.inputs[0]).shape[1];
    bool aligned = channels % block == 0;
    if (op == "poolmax" || op == "poolavg") {
      if (!aligned) return;
      out.blocked[id] = 1;
      reads[id][0] = 1;
    } else if (op == "global_avgpool") {
      if (!aligned || !blocked(n.inputs[0])) return;
      out.blocked[id] = 1;
      reads[id][0] = 1;
    } else if (carried_activation(op) || op == "batchnorm") {
      if (!blocked(n.inputs[0])) return;
      for (size_t i = 1; i < n.inputs.size(); ++i)
        if (!is_const(n.inputs[i])) return;
      out.blocked[id] = 1;
      reads[id][0] = 1;
    } else if (fused_into_conv(op)) {
      // Fused into a blocked conv whose only reader it is (ONNX Runtime's FusedConv).
      TensorRef x = n.inputs[0];
      const Node& p = g.node(x.node);
      if (!blocked(x) || p.op->name != "conv" || p.attrs.s("act") != "none" ||
          consumers[x.node].size() != 1)
        return;
      out.blocked[id] = 1;
      reads[id][0] = 1;
    } else if (op == "ewadd" || op == "ewmul" || op == "add" || op == "mul") {
      if (!all_blocked_same()) return;
      out.blocked[id] = 1;
      read_all();
    } else if (op == "concat") {
      if (n.attrs.i("axis") != 1) return;
      for (const TensorRef& r : n.inputs)
        if (is_const(r) || !blocked(r) || g.type(r).shape[1] % block != 0) return;
      out.blocked[id] = 1;
      read_all();
    }
  }

  NchwcLayout run() {
    out.block = block;
    out.blocked.assign(g.num_slots(), 0);
    reads.assign(g.num_slots(), {});
    if (block <= 0) return out;
    std::vector<NodeId> order = g.topo_order();
    for (NodeId id : order)
      if (!g.node(id).is_source() && !constant[id]) decide(id);
    // Reorders: a plain tensor read blocked (one ReorderInput per reader), a blocked tensor
    // read plain or returned (one ReorderOutput per tensor).
    std::vector<uint8_t> plain_use(g.num_slots(), 0);
    for (NodeId id : order) {
      const Node& n = g.node(id);
      if (n.is_source() || constant[id]) continue;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        TensorRef r = n.inputs[i];
        if (is_const(r)) continue;
        bool read_blocked = reads[id][i] != 0;
        if (blocked(r) && !read_blocked) plain_use[r.node] = 1;
        if (!blocked(r) && read_blocked) {
          ++out.reorder_inputs;
          out.reorder_mb += megabytes(g.type(r));
        }
      }
    }
    for (const GraphOutput& o : g.outputs())
      if (blocked(o.ref)) plain_use[o.ref.node] = 1;
    for (NodeId id : order)
      if (plain_use[id]) {
        ++out.reorder_outputs;
        out.reorder_mb += megabytes(g.node(id).outputs[0]);
      }
    return out;
  }
};

}  // namespace

int nchwc_block_size() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f") ? 16 : 8;
#else
  return 0;
#endif
}

NchwcConvFit nchwc_conv_fit(int64_t out_channels, int64_t in_per_group, int64_t groups, int block) {
  if (block <= 0 || groups <= 0) return {};
  if (groups > 1) {
    if (in_per_group == 1 && out_channels == groups)  // depthwise
      return out_channels % kChannelQuantum == 0 ? NchwcConvFit{true, true} : NchwcConvFit{};
    if (in_per_group % block != 0 || out_channels % groups != 0 ||
        (out_channels / groups) % block != 0)
      return {};
    return {true, true};
  }
  if (in_per_group < block) return {true, false};  // reads the plain tensor directly
  if (in_per_group % kChannelQuantum != 0) return {};
  return {true, true};
}

std::string NchwcLayout::summary() const {
  if (block <= 0) return "no blocked layout on this CPU";
  return fmt::format("{} of {} convolutions blocked (block {}), {} reorders ({:.1f} MB a run)",
                     blocked_convs, blocked_convs + plain_convs, block, reorders(), reorder_mb);
}

NchwcLayout predict_nchwc(const Graph& g, int block) {
  return Predictor{.g = g, .block = block}.run();
}

}  // namespace graphsub::ort
