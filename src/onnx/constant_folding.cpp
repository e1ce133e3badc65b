#include "onnx/constant_folding.h"

#include <fmt/format.h>

#include <set>

#include "ir/error.h"

namespace graphsub {

static bool constant_data(const Graph& g, TensorRef r) {
  const Node& n = g.node(r.node);
  return n.is_weight() && n.data != nullptr;
}

size_t fold_constants(Graph& g) {
  std::set<std::string> names;
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id) && g.node(id).is_source()) names.insert(g.node(id).name);
  auto unique = [&](std::string base) {
    std::string name = base;
    for (int k = 1; !names.insert(name).second; ++k) name = fmt::format("{}_{}", base, k);
    return name;
  };
  size_t folded = 0;
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    if (n.is_input() || n.is_weight() || n.op->cls == OpClass::Opaque || !n.op->kernel_f32)
      continue;
    bool all_const = true;
    for (auto r : n.inputs) all_const = all_const && constant_data(g, r);
    if (!all_const) continue;
    std::vector<TensorType> in_types;
    std::vector<const float*> in_ptrs;
    for (auto r : n.inputs) {
      in_types.push_back(g.type(r));
      in_ptrs.push_back(g.node(r.node).data->data());
    }
    std::vector<std::vector<float>> outs(n.outputs.size());
    std::vector<float*> out_ptrs;
    for (size_t i = 0; i < outs.size(); ++i) {
      outs[i].assign(static_cast<size_t>(n.outputs[i].numel()), 0.0f);
      out_ptrs.push_back(outs[i].data());
    }
    KernelIO<float> io{n.attrs, in_types, n.outputs, in_ptrs, out_ptrs};
    n.op->kernel_f32(io);
    std::string base = n.name.empty() ? fmt::format("{}_{}", n.op->name, id) : n.name;
    for (uint32_t i = 0; i < outs.size(); ++i) {
      TensorType t = n.outputs[i];
      std::string name = unique(outs.size() == 1 ? base : fmt::format("{}_{}", base, i));
      NodeId w =
          g.add_weight(name, t, std::make_shared<const std::vector<float>>(std::move(outs[i])));
      g.replace_uses({id, i}, {w, 0});
    }
    g.remove(id);
    ++folded;
  }
  return folded;
}

}  // namespace graphsub
