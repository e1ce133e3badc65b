#include "opt/cost_model.h"

#include "ir/hash.h"
#include "opt/graph_index.h"

namespace graphsub::opt {

OpConfig op_config(const Graph& g, NodeId id, const std::vector<uint8_t>& constant) {
  const Node& n = g.node(id);
  OpConfig c;
  c.op = n.op;
  c.attrs = n.attrs;
  for (auto r : n.inputs) {
    c.in.push_back(g.type(r));
    c.in_constant.push_back(constant[r.node]);
  }
  c.out = n.outputs;
  return c;
}

// dtype, shape and layout; split points are left out (they cost nothing).
static std::string type_key(const TensorType& t) {
  std::string s = std::string(dtype_name(t.dtype)) + shape_str(t.shape);
  if (t.layout != Layout::Default) s += std::string("@") + layout_name(t.layout);
  return s;
}

std::string config_key(const OpConfig& c) {
  std::string s = c.op->name;
  s += '|';
  s += c.attrs.str();
  s += '|';
  for (size_t i = 0; i < c.in.size(); ++i) {
    if (i) s += ' ';
    if (c.in_constant[i]) s += "w:";
    s += type_key(c.in[i]);
  }
  s += "|";
  for (size_t i = 0; i < c.out.size(); ++i) {
    if (i) s += ' ';
    s += type_key(c.out[i]);
  }
  return s;
}

namespace {

// What config_key() writes of a type: dtype, layout and shape, no split points.
void add_type(Hasher& h, const TensorType& t) {
  h.add(static_cast<uint64_t>(t.dtype)).add(static_cast<uint64_t>(t.layout));
  h.add(static_cast<uint64_t>(t.shape.size()));
  for (auto d : t.shape) h.add(d);
}

// Hash of the information config_key() spells out, without building the text (the search
// prices millions of nodes).
uint64_t config_hash(const Graph& g, const Node& n, const std::vector<uint8_t>& constant) {
  Hasher h;
  h.add(std::string_view(n.op->name)).add(n.attrs);
  h.add(static_cast<uint64_t>(n.inputs.size()));
  for (auto r : n.inputs) {
    h.add(static_cast<uint64_t>(constant[r.node] ? 1 : 0));
    add_type(h, g.type(r));
  }
  h.add(static_cast<uint64_t>(n.outputs.size()));
  for (auto& t : n.outputs) add_type(h, t);
  return h.digest();
}

}  // namespace

double CostModel::node_cost(const Graph& g, NodeId id, const std::vector<uint8_t>& constant) {
  const Node& n = g.node(id);
  if (n.is_source() || constant[id]) return 0;
  uint64_t h = config_hash(g, n, constant);
  auto it = memo_.find(h);
  if (it != memo_.end()) return it->second;
  double v = config_cost(op_config(g, id, constant));
  memo_.emplace(h, v);
  return v;
}

double CostModel::graph_cost(const Graph& g) {
  auto constant = constant_nodes(g);
  double sum = per_graph_cost();
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id)) sum += node_cost(g, id, constant);
  return sum;
}

}  // namespace graphsub::opt
