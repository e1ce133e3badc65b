#include "ir/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>
#include <set>

#include "core/error.h"

namespace graphsub {

bool Node::is_input() const {
  return op->name == "input";
}
bool Node::is_weight() const {
  return op->name == "weight";
}

NodeId Graph::push(Node n) {
  nodes_.push_back(std::make_shared<const Node>(std::move(n)));
  return static_cast<NodeId>(nodes_.size() - 1);
}

Node& Graph::edit(NodeId id) {
  auto& p = nodes_[id];
  if (p.use_count() > 1) p = std::make_shared<const Node>(*p);
  return const_cast<Node&>(*p);  // unique owner: safe to mutate
}

static std::string inputs_str(const Graph& g, const std::vector<TensorRef>& ins) {
  std::vector<std::string> parts;
  for (auto r : ins)
    parts.push_back(g.alive(r.node) && r.output < g.node(r.node).outputs.size() ? g.type(r).str()
                                                                                : "?");
  return fmt::format("{}", fmt::join(parts, ", "));
}

NodeId Graph::add(const OpDef& op, std::vector<TensorRef> inputs, Attrs attrs, std::string name) {
  std::vector<TensorType> in_types;
  for (auto r : inputs) {
    if (!alive(r.node) || r.output >= nodes_[r.node]->outputs.size())
      throw Error(fmt::format("{} '{}': input refers to missing tensor {}:{}", op.name, name,
                              r.node, r.output));
    in_types.push_back(type(r));
  }
  Node n;
  n.op = &op;
  n.name = std::move(name);
  try {
    check_arity(op, inputs.size());
    n.attrs = normalize_attrs(op, std::move(attrs));
    n.outputs = op.infer(n.attrs, in_types);
  } catch (const Error& e) {
    throw Error(fmt::format("{}{}{} (inputs {}): {}", op.name, n.name.empty() ? "" : " '",
                            n.name.empty() ? "" : n.name + "'", inputs_str(*this, inputs),
                            e.what()));
  }
  n.inputs = std::move(inputs);
  return push(std::move(n));
}

NodeId Graph::add(std::string_view op, std::vector<TensorRef> inputs, Attrs attrs,
                  std::string name) {
  return add(op_def(op), std::move(inputs), std::move(attrs), std::move(name));
}

NodeId Graph::add_unchecked(const OpDef& op, std::vector<TensorRef> inputs, Attrs attrs,
                            std::string name, size_t num_outputs) {
  Node n;
  n.op = &op;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  n.name = std::move(name);
  n.outputs.resize(num_outputs);
  return push(std::move(n));
}

NodeId Graph::add_input(std::string name, TensorType type) {
  Node n;
  n.op = &op_def("input");
  n.name = std::move(name);
  n.outputs.push_back(std::move(type));
  return push(std::move(n));
}

NodeId Graph::add_weight(std::string name, TensorType type, WeightData data) {
  if (data && static_cast<int64_t>(data->size()) != type.numel())
    throw Error(fmt::format("weight '{}' of shape {} has {} values, expected {}", name,
                            shape_str(type.shape), data->size(), type.numel()));
  Node n;
  n.op = &op_def("weight");
  n.name = std::move(name);
  n.outputs.push_back(std::move(type));
  n.data = std::move(data);
  return push(std::move(n));
}

NodeId Graph::add_opaque(std::string op_type, std::vector<TensorRef> inputs,
                         std::vector<TensorType> outputs, Attrs attrs, std::string name) {
  Node n;
  n.op = &op_def("opaque");
  attrs.set("op_type", std::move(op_type));
  if (!attrs.has("domain")) attrs.set("domain", std::string{});
  n.attrs = std::move(attrs);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.name = std::move(name);
  return push(std::move(n));
}

void Graph::add_output(std::string name, TensorRef ref) {
  if (!alive(ref.node) || ref.output >= nodes_[ref.node]->outputs.size())
    throw Error(fmt::format("graph output '{}' refers to missing tensor {}:{}", name, ref.node,
                            ref.output));
  outputs_.push_back({std::move(name), ref});
}

size_t Graph::num_nodes() const {
  return static_cast<size_t>(
      std::count_if(nodes_.begin(), nodes_.end(), [](const auto& n) { return n != nullptr; }));
}

size_t Graph::num_ops() const {
  return static_cast<size_t>(std::count_if(nodes_.begin(), nodes_.end(), [](const auto& n) {
    return n != nullptr && n->op->cls != OpClass::Source;
  }));
}

std::vector<NodeId> Graph::inputs() const {
  std::vector<NodeId> r;
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (nodes_[i] && nodes_[i]->is_input()) r.push_back(i);
  return r;
}

std::vector<NodeId> Graph::weights() const {
  std::vector<NodeId> r;
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (nodes_[i] && nodes_[i]->is_weight()) r.push_back(i);
  return r;
}

void Graph::remove(NodeId id) {
  nodes_.at(id) = nullptr;
}

void Graph::replace_in(NodeId id, TensorRef from, TensorRef to) {
  if (!alive(id)) return;
  const auto& ins = nodes_[id]->inputs;
  if (std::find(ins.begin(), ins.end(), from) == ins.end()) return;  // shared nodes stay shared
  for (auto& r : edit(id).inputs)
    if (r == from) r = to;
}

void Graph::replace_uses(TensorRef from, TensorRef to) {
  for (NodeId i = 0; i < nodes_.size(); ++i) replace_in(i, from, to);
  for (auto& o : outputs_)
    if (o.ref == from) o.ref = to;
}

void Graph::replace_uses(TensorRef from, TensorRef to, const std::vector<NodeId>& readers) {
  for (NodeId i : readers) replace_in(i, from, to);
  for (auto& o : outputs_)
    if (o.ref == from) o.ref = to;
}

void Graph::set_inputs(NodeId id, std::vector<TensorRef> inputs) {
  edit(id).inputs = std::move(inputs);
}

void Graph::set_weight_data(NodeId id, WeightData data) {
  edit(id).data = std::move(data);
}

void Graph::set_output_type(TensorRef r, TensorType t) {
  edit(r.node).outputs.at(r.output) = std::move(t);
}

std::vector<std::vector<NodeId>> Graph::consumers() const {
  std::vector<std::vector<NodeId>> c(nodes_.size());
  for (NodeId i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i]) continue;
    for (auto r : nodes_[i]->inputs)
      if (r.node < c.size() && (c[r.node].empty() || c[r.node].back() != i)) c[r.node].push_back(i);
  }
  return c;
}

std::vector<NodeId> Graph::topo_order() const {
  std::vector<int> pending(nodes_.size(), 0);
  auto cons = consumers();
  for (NodeId i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i]) continue;
    std::set<NodeId> distinct;
    for (auto r : nodes_[i]->inputs) {
      if (!alive(r.node))
        throw Error(fmt::format("{} reads tensor {}:{} which does not exist", describe(i), r.node,
                                r.output));
      distinct.insert(r.node);
    }
    pending[i] = static_cast<int>(distinct.size());
  }
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (nodes_[i] && pending[i] == 0) ready.push(i);
  std::vector<NodeId> order;
  order.reserve(nodes_.size());
  while (!ready.empty()) {
    NodeId n = ready.top();
    ready.pop();
    order.push_back(n);
    for (NodeId c : cons[n])
      if (--pending[c] == 0) ready.push(c);
  }
  if (order.size() != num_nodes()) {
    for (NodeId i = 0; i < nodes_.size(); ++i)
      if (nodes_[i] && pending[i] > 0)
        throw Error(fmt::format("cycle in graph through {}", describe(i)));
  }
  return order;
}

void Graph::infer_all() {
  for (NodeId id : topo_order()) {
    const Node& n = *nodes_[id];
    if (n.is_input() || n.is_weight() || n.op->cls == OpClass::Opaque) continue;
    std::vector<TensorType> in;
    for (auto r : n.inputs) {
      if (r.output >= nodes_[r.node]->outputs.size())
        throw Error(fmt::format("{} reads output {} of {}, which has {} outputs", describe(id),
                                r.output, describe(r.node), nodes_[r.node]->outputs.size()));
      in.push_back(type(r));
    }
    try {
      check_arity(*n.op, in.size());
      Attrs a = normalize_attrs(*n.op, n.attrs);
      auto out = n.op->infer(a, in);
      Node& m = edit(id);
      m.attrs = std::move(a);
      m.outputs = std::move(out);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", describe(id), e.what()));
    }
  }
}

void Graph::remove_dead() {
  std::vector<bool> live(nodes_.size(), false);
  std::vector<NodeId> stack;
  for (auto& o : outputs_) stack.push_back(o.ref.node);
  while (!stack.empty()) {
    NodeId n = stack.back();
    stack.pop_back();
    if (!alive(n) || live[n]) continue;  // a dangling reference is validate()'s to report
    live[n] = true;
    for (auto r : nodes_[n]->inputs) stack.push_back(r.node);
  }
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (nodes_[i] && !live[i] && !nodes_[i]->is_input()) nodes_[i] = nullptr;
}

void Graph::compact() {
  auto order = topo_order();
  std::vector<NodeId> remap(nodes_.size(), 0);
  std::vector<std::shared_ptr<const Node>> fresh;
  fresh.reserve(order.size());
  for (NodeId id : order) {
    remap[id] = static_cast<NodeId>(fresh.size());
    fresh.push_back(nodes_[id]);
  }
  nodes_ = std::move(fresh);
  for (NodeId i = 0; i < nodes_.size(); ++i) {
    bool changed = false;
    for (auto r : nodes_[i]->inputs) changed |= remap[r.node] != r.node;
    if (!changed) continue;
    for (auto& r : edit(i).inputs) r.node = remap[r.node];
  }
  for (auto& o : outputs_) o.ref.node = remap[o.ref.node];
}

GraphPatch Graph::diff_from(const Graph& base) const {
  GraphPatch p;
  p.num_slots = nodes_.size();
  for (NodeId i = 0; i < nodes_.size(); ++i)
    if (i >= base.nodes_.size() || nodes_[i] != base.nodes_[i]) p.nodes.emplace_back(i, nodes_[i]);
  p.outputs = outputs_;
  return p;
}

Graph Graph::patched(const GraphPatch& patch) const {
  Graph g;
  g.nodes_.reserve(patch.num_slots);
  g.nodes_.assign(nodes_.begin(), nodes_.begin() + static_cast<std::ptrdiff_t>(
                                                       std::min(nodes_.size(), patch.num_slots)));
  g.nodes_.resize(patch.num_slots);
  for (auto& [id, node] : patch.nodes) g.nodes_[id] = node;
  g.outputs_ = patch.outputs;
  return g;
}

std::string Graph::describe(NodeId id) const {
  if (!alive(id)) return fmt::format("node {} (removed)", id);
  const Node& n = *nodes_[id];
  std::vector<std::string> ins;
  for (auto r : n.inputs)
    ins.push_back(alive(r.node) && r.output < nodes_[r.node]->outputs.size() ? type(r).str() : "?");
  std::string opname = n.op->name;
  if (n.op->cls == OpClass::Opaque) {
    if (auto* t = n.attrs.find("op_type")) opname += ":" + attr_value_str(*t);
  }
  return fmt::format("node {}{} ({}{}{})", id, n.name.empty() ? "" : " '" + n.name + "'", opname,
                     ins.empty() ? "" : ", inputs ", fmt::join(ins, " "));
}

}  // namespace graphsub
