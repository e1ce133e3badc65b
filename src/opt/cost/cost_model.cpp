#include "opt/cost/cost_model.h"

#include <cstring>
#include <string_view>

#include "ir/hash.h"
#include "opt/match/graph_index.h"

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

// The bytes ir/hash.h's Hasher would collect for a configuration, written into a buffer the
// model keeps (Hasher allocates a fresh one per call, and the search prices millions of
// nodes). The digest is the same as Hasher's, so the memo's keys are unchanged.
class ConfigBytes {
 public:
  explicit ConfigBytes(std::vector<unsigned char>& buf) : buf_(buf) { buf_.clear(); }
  void add(uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
    buf_.insert(buf_.end(), b, b + 8);
  }
  void add(std::string_view s) {
    add(static_cast<uint64_t>(s.size()));
    buf_.insert(buf_.end(), s.begin(), s.end());
  }
  void add(const AttrValue& v) {
    add(static_cast<uint64_t>(v.index()));
    switch (attr_kind(v)) {
      case AttrKind::Int:
        add(static_cast<uint64_t>(std::get<int64_t>(v)));
        return;
      case AttrKind::Float: {
        double d = std::get<double>(v);
        uint64_t bits;
        std::memcpy(&bits, &d, 8);
        add(bits);
        return;
      }
      case AttrKind::String:
        add(std::string_view(std::get<std::string>(v)));
        return;
      case AttrKind::Ints: {
        auto& xs = std::get<std::vector<int64_t>>(v);
        add(static_cast<uint64_t>(xs.size()));
        for (auto x : xs) add(static_cast<uint64_t>(x));
        return;
      }
    }
  }
  void add(const Attrs& a) {
    add(static_cast<uint64_t>(a.items().size()));
    for (auto& [k, v] : a.items()) {
      add(std::string_view(k));
      add(v);
    }
  }
  // What config_key() writes of a type: dtype, layout and shape, no split points.
  void add_type(const TensorType& t) {
    add(static_cast<uint64_t>(t.dtype));
    add(static_cast<uint64_t>(t.layout));
    add(static_cast<uint64_t>(t.shape.size()));
    for (auto d : t.shape) add(static_cast<uint64_t>(d));
  }
  uint64_t digest() const { return hash_bytes(buf_.data(), buf_.size()); }

 private:
  std::vector<unsigned char>& buf_;
};

// Hash of the information config_key() spells out, without building the text (the search
// prices millions of nodes).
uint64_t config_hash(const Graph& g, const Node& n, const std::vector<uint8_t>& constant,
                     std::vector<unsigned char>& buf) {
  ConfigBytes h(buf);
  h.add(std::string_view(n.op->name));
  h.add(n.attrs);
  h.add(static_cast<uint64_t>(n.inputs.size()));
  for (auto r : n.inputs) {
    h.add(static_cast<uint64_t>(constant[r.node] ? 1 : 0));
    h.add_type(g.type(r));
  }
  h.add(static_cast<uint64_t>(n.outputs.size()));
  for (auto& t : n.outputs) h.add_type(t);
  return h.digest();
}

uint64_t config_hash(const OpDef& op, const Attrs& attrs, std::span<const TensorType* const> in,
                     std::span<const uint8_t> in_constant, const std::vector<TensorType>& out,
                     std::vector<unsigned char>& buf) {
  ConfigBytes h(buf);
  h.add(std::string_view(op.name));
  h.add(attrs);
  h.add(static_cast<uint64_t>(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    h.add(static_cast<uint64_t>(in_constant[i] ? 1 : 0));
    h.add_type(*in[i]);
  }
  h.add(static_cast<uint64_t>(out.size()));
  for (auto& t : out) h.add_type(t);
  return h.digest();
}

}  // namespace

double CostModel::node_cost(const OpDef& op, const Attrs& attrs,
                            std::span<const TensorType* const> in,
                            std::span<const uint8_t> in_constant,
                            const std::vector<TensorType>& out) {
  if (not_run_here(op)) return kNotRunHere;
  uint64_t h = config_hash(op, attrs, in, in_constant, out, key_bytes_);
  auto it = memo_.find(h);
  if (it != memo_.end()) return it->second;
  OpConfig c;
  c.op = &op;
  c.attrs = attrs;
  for (const TensorType* t : in) c.in.push_back(*t);
  c.in_constant.assign(in_constant.begin(), in_constant.end());
  c.out = out;
  double v = config_cost(c);
  memo_.emplace(h, v);
  return v;
}

double CostModel::node_cost(const Graph& g, NodeId id, const std::vector<uint8_t>& constant) {
  const Node& n = g.node(id);
  if (n.is_source() || constant[id]) return 0;
  if (not_run_here(*n.op)) return kNotRunHere;
  uint64_t h = config_hash(g, n, constant, key_bytes_);
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
