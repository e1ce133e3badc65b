#include "check/opaque_cut.h"

#include <fmt/format.h>

#include <map>

#include "core/error.h"

namespace graphsub {

static std::string opaque_key(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (n.name.empty())
    throw Error(
        fmt::format("result check: {} has no name to match it across graphs", g.describe(id)));
  return n.name;
}

std::set<std::string> opaque_node_names(const Graph& g) {
  std::set<std::string> s;
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id) && g.node(id).op->cls == OpClass::Opaque) s.insert(opaque_key(g, id));
  return s;
}

namespace {

std::string boundary_name(const std::string& key, size_t k) {
  return fmt::format("{} input {}", key, k);
}

}  // namespace

std::set<std::string> opaque_boundary(const Graph& g) {
  std::set<std::string> names;
  for (NodeId id = 0; id < g.num_slots(); ++id) {
    if (!g.alive(id) || g.node(id).op->cls != OpClass::Opaque) continue;
    const Node& n = g.node(id);
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (!g.node(n.inputs[k].node).is_source()) names.insert(boundary_name(opaque_key(g, id), k));
  }
  return names;
}

Graph cut_at_opaque(const Graph& g, std::vector<std::string>* boundary_names,
                    const std::set<std::string>* boundary) {
  Graph cut;
  std::map<TensorRef, TensorRef> map;
  // By name, so that two graphs list the tensors they share in one order. A tensor read by
  // several opaque nodes is listed under each: the optimizer may have merged two equal
  // tensors that the original computes apart.
  std::map<std::string, TensorRef> outs;
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    if (n.is_input()) {
      map[{id, 0}] = {cut.add_input(n.name, n.outputs[0]), 0};
    } else if (n.is_weight()) {
      map[{id, 0}] = {cut.add_weight(n.name, n.outputs[0], n.data), 0};
    } else if (n.op->cls == OpClass::Opaque) {
      std::string key = opaque_key(g, id);
      for (uint32_t i = 0; i < n.outputs.size(); ++i)
        map[{id, i}] = {cut.add_input(fmt::format("{} output {}", key, i), n.outputs[i]), 0};
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        TensorRef r = n.inputs[k];
        std::string name = boundary_name(key, k);
        if (g.node(r.node).is_source() || (boundary && !boundary->count(name))) continue;
        outs.emplace(std::move(name), map.at(r));
      }
    } else if (n.is_source()) {
      map[{id, 0}] = {cut.add(*n.op, {}, n.attrs, n.name), 0};
    } else {
      std::vector<TensorRef> ins;
      for (auto r : n.inputs) ins.push_back(map.at(r));
      NodeId c = cut.add(*n.op, std::move(ins), n.attrs, n.name);
      for (uint32_t i = 0; i < n.outputs.size(); ++i) map[{id, i}] = {c, i};
    }
  }
  for (const auto& o : g.outputs()) cut.add_output(o.name, map.at(o.ref));
  for (const auto& [name, ref] : outs) {
    cut.add_output(name, ref);
    if (boundary_names) boundary_names->push_back(name);
  }
  cut.remove_dead();
  return cut;
}

}  // namespace graphsub
