#include "onnx/import/symbolic_dims.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "onnx/onnx_model.h"
#include "ops/op_def.h"

namespace graphsub {

std::string symbolic_key(const Node& n) {
  if (n.is_weight()) return n.name + "|weight";
  if (n.op->cls == OpClass::Opaque) return n.name + "|" + n.attrs.s("op_type");
  return n.name + "|" + n.op->name;
}

namespace {

std::map<std::string, int> key_counts(const Graph& g) {
  std::map<std::string, int> counts;
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id) && !g.node(id).is_input()) ++counts[symbolic_key(g.node(id))];
  return counts;
}

std::vector<Shape> output_shapes(const Node& n) {
  std::vector<Shape> s;
  for (const auto& t : n.outputs) s.push_back(t.shape);
  return s;
}

// Reshape target at the alternate value when no import recorded it: output dimensions that
// copy the input's dimension at the same position follow it; the element count must then
// come out right.
Shape derive_reshape(const Graph& g, NodeId id, const Shape& in_alt) {
  const Node& n = g.node(id);
  const Shape& in = g.type(n.inputs[0]).shape;
  Shape out = n.outputs[0].shape;
  for (size_t j = 0; j < out.size() && j < in.size(); ++j)
    if (out[j] == in[j] && in_alt[j] != in[j]) out[j] = in_alt[j];
  if (numel(out) != numel(in_alt))
    throw Error(fmt::format("{}: cannot tell which of its dimensions follow the symbolic one",
                            g.describe(id)));
  return out;
}

// Expand target at the alternate value when no import recorded it: output dimensions that
// copy the input's (aligned at the end) follow it, the others stay; the node's inference
// then says whether the input still broadcasts to that.
Shape derive_expand(const Graph& g, NodeId id, const Shape& in_alt) {
  const Node& n = g.node(id);
  const Shape& in = g.type(n.inputs[0]).shape;
  Shape out = n.outputs[0].shape;
  size_t lead = out.size() - std::min(out.size(), in.size());
  for (size_t j = lead; j < out.size(); ++j)
    if (out[j] == in[j - lead]) out[j] = in_alt[j - lead];
  return out;
}

}  // namespace

std::map<std::string, std::vector<Shape>> shapes_by_key(const Graph& g) {
  auto counts = key_counts(g);
  std::map<std::string, std::vector<Shape>> r;
  for (NodeId id = 0; id < g.num_slots(); ++id) {
    if (!g.alive(id) || g.node(id).is_input()) continue;
    std::string key = symbolic_key(g.node(id));
    if (counts[key] == 1) r[key] = output_shapes(g.node(id));
  }
  return r;
}

Graph instantiate_symbolic(const Graph& g, const OnnxModelInfo& info, size_t p,
                           std::map<TensorRef, TensorRef>* out_map) {
  if (p >= info.symbolic.size() || p >= info.alt_shapes.size())
    throw Error(fmt::format("symbolic dimension {} is not recorded", p));
  const SymbolicDim& dim = info.symbolic[p];
  const auto& alt_by_key = info.alt_shapes[p];
  auto counts = key_counts(g);
  std::string at = fmt::format("{}={}", dim.name, dim.alt);
  // The recorded shapes at the alternate value, when `id` is the node imported under its key
  // (same key, unique, same shapes at the imported value).
  auto recorded = [&](NodeId id) -> const std::vector<Shape>* {
    const Node& n = g.node(id);
    std::string key = symbolic_key(n);
    if (counts[key] != 1) return nullptr;
    auto base = info.base_shapes.find(key);
    auto alt = alt_by_key.find(key);
    if (base == info.base_shapes.end() || alt == alt_by_key.end()) return nullptr;
    if (base->second != output_shapes(n)) return nullptr;
    return &alt->second;
  };
  auto bakes = [&](NodeId id, const std::string& why) {
    return Error(
        fmt::format("{} holds the value {} of symbolic dimension '{}' ({}): the graph "
                    "is valid at that value only, not at {}",
                    g.describe(id), dim.value, dim.name, why, at));
  };

  Graph r;
  std::map<TensorRef, TensorRef> map;
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    if (n.is_input()) {
      TensorType t = n.outputs[0];
      for (const auto& v : info.inputs)
        if (v.name == n.name)
          for (size_t d = 0; d < v.dim_params.size() && d < t.shape.size(); ++d)
            if (v.dim_params[d] == dim.name) t.shape[d] = dim.alt;
      map[{id, 0}] = {r.add_input(n.name, std::move(t)), 0};
      continue;
    }
    const std::vector<Shape>* want = recorded(id);
    if (n.is_weight()) {
      if (want && (*want)[0] != n.outputs[0].shape)
        throw bakes(id, fmt::format("a weight that is {} there", shape_str((*want)[0])));
      map[{id, 0}] = {r.add_weight(n.name, n.outputs[0], n.data), 0};
      continue;
    }
    std::vector<TensorRef> ins;
    bool changed = false;
    for (auto in : n.inputs) {
      ins.push_back(map.at(in));
      changed = changed || r.type(ins.back()).shape != g.type(in).shape;
    }
    NodeId a;
    if (n.op->cls == OpClass::Opaque) {
      std::vector<TensorType> outs = n.outputs;
      if (want) {
        for (size_t i = 0; i < outs.size() && i < want->size(); ++i) outs[i].shape = (*want)[i];
      } else if (changed) {
        throw bakes(id, "an opaque node whose output shapes there are unknown");
      }
      Attrs attrs = n.attrs;
      std::string op_type = attrs.s("op_type");
      a = r.add_opaque(op_type, std::move(ins), std::move(outs), std::move(attrs), n.name);
    } else {
      Attrs attrs = n.attrs;
      if (n.op->name == "reshape" && changed) {
        Shape target = want ? (*want)[0] : derive_reshape(g, id, r.type(ins[0]).shape);
        attrs.set("shape", std::vector<int64_t>(target.begin(), target.end()));
      }
      if (n.op->name == "expand" && (changed || (want && (*want)[0] != n.outputs[0].shape))) {
        Shape target = want ? (*want)[0] : derive_expand(g, id, r.type(ins[0]).shape);
        attrs.set("shape", std::vector<int64_t>(target.begin(), target.end()));
      }
      // An elementwise sum or product of equal shapes at the imported value (a symbolic
      // dimension at 1 beside a broadcast one) broadcasts at another value: the same ONNX
      // node, written as Add or Mul either way.
      const OpDef* op = n.op;
      bool unequal = ins.size() == 2 && r.type(ins[0]).shape != r.type(ins[1]).shape;
      if (unequal && (op->name == "ewadd" || op->name == "ewmul"))
        op = &op_def(op->name == "ewadd" ? "add" : "mul");
      try {
        a = r.add(*op, std::move(ins), std::move(attrs), n.name);
      } catch (const Error& e) {
        throw bakes(id, e.what());
      }
    }
    const Node& made = r.node(a);
    if (want && output_shapes(made) != *want)
      throw bakes(id, fmt::format("it gives {} there, the model {}", made.outputs[0].str(),
                                  shape_str((*want)[0])));
    for (uint32_t i = 0; i < n.outputs.size(); ++i) map[{id, i}] = {a, i};
  }
  for (const auto& o : g.outputs()) r.add_output(o.name, map.at(o.ref));
  if (out_map) *out_map = std::move(map);
  return r;
}

}  // namespace graphsub
