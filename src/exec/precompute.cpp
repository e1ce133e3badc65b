#include "exec/precompute.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <set>

#include "core/error.h"

namespace graphsub {

namespace {

using Values = std::vector<WeightData>;  // per output (shared, never copied)

Values compute(const Graph& g, NodeId id, const std::map<NodeId, Values>& known) {
  const Node& n = g.node(id);
  std::vector<TensorType> in_types;
  std::vector<const float*> in;
  for (auto r : n.inputs) {
    in_types.push_back(g.type(r));
    in.push_back(known.at(r.node)[r.output]->data());
  }
  std::vector<std::vector<float>> out(n.outputs.size());
  std::vector<float*> outp;
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    out[i].resize(static_cast<size_t>(n.outputs[i].numel()));
    outp.push_back(out[i].data());
  }
  KernelIO<float> io{n.attrs, in_types, n.outputs, in, outp};
  n.op->kernel_f32(io);
  Values v;
  for (auto& o : out) v.push_back(std::make_shared<const std::vector<float>>(std::move(o)));
  return v;
}

}  // namespace

size_t precompute_weights(Graph& g, bool generators_too) {
  std::set<std::string> names;
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id) && g.node(id).is_source()) names.insert(g.node(id).name);
  auto unique = [&](std::string base) {
    std::string name = base;
    for (int k = 2; names.count(name); ++k) name = fmt::format("{}.{}", base, k);
    names.insert(name);
    return name;
  };

  std::map<NodeId, Values> known;
  std::map<NodeId, std::string> label;  // a readable origin for folded weights' names
  std::vector<std::pair<TensorRef, TensorRef>> replace;
  size_t folded = 0;
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    if (n.is_input()) continue;
    if (n.is_weight()) {
      if (n.data) known[id] = {n.data};
      label[id] = n.name;
      continue;
    }
    if (n.op->cls == OpClass::Opaque || !n.op->kernel_f32 || (!n.is_source() && n.inputs.empty()))
      continue;
    bool ready = true;
    for (auto r : n.inputs) ready = ready && known.count(r.node);
    if (!ready) continue;
    known[id] = compute(g, id, known);
    label[id] = (n.inputs.empty() ? n.op->name : label[n.inputs[0].node] + "." + n.op->name);
    // Generator constants stay as they are unless an operator folds them, or the caller
    // needs every constant as data (a file format has no generator operators).
    if (n.is_source() && !generators_too) continue;
    ++folded;
    for (uint32_t k = 0; k < n.outputs.size(); ++k) {
      TensorType t = n.outputs[k];
      WeightData data = known[id][k];
      std::string name =
          unique(n.outputs.size() > 1 ? fmt::format("{}{}", label[id], k) : label[id]);
      replace.push_back({{id, k}, {g.add_weight(name, std::move(t), std::move(data)), 0}});
    }
  }
  for (auto& [from, to] : replace) g.replace_uses(from, to);
  g.remove_dead();
  return folded;
}

}  // namespace graphsub
