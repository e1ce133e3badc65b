#include "ir/print.h"

#include <fmt/format.h>

#include <map>

namespace graphsub {

namespace {

std::string op_label(const Node& n) {
  if (n.op->cls == OpClass::Opaque)
    if (auto* t = n.attrs.find("op_type")) return "opaque:" + attr_value_str(*t);
  return n.op->name;
}

// Source nodes are shown by name, others as %k in topological order.
std::map<NodeId, std::string> value_names(const Graph& g, const std::vector<NodeId>& order) {
  std::map<NodeId, std::string> names;
  int k = 0;
  for (NodeId id : order)
    names[id] =
        g.node(id).is_input() || g.node(id).is_weight() ? g.node(id).name : fmt::format("%{}", k++);
  return names;
}

std::string ref_str(const Graph& g, const std::map<NodeId, std::string>& names, TensorRef r) {
  const std::string& base = names.at(r.node);
  return g.node(r.node).outputs.size() > 1 ? fmt::format("{}#{}", base, r.output) : base;
}

std::string dot_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r;
}

}  // namespace

std::string to_text(const Graph& g) {
  auto order = g.topo_order();
  auto names = value_names(g, order);
  std::string out;
  for (NodeId id : order) {
    const Node& n = g.node(id);
    if (n.is_source() && n.inputs.empty() && (n.is_input() || n.is_weight())) {
      out += fmt::format("{} {}: {}{}\n", n.op->name, n.name, n.outputs[0].str(),
                         n.data ? " (data)" : "");
      continue;
    }
    std::vector<std::string> ins, outs;
    for (auto r : n.inputs) ins.push_back(ref_str(g, names, r));
    for (auto& t : n.outputs) outs.push_back(t.str());
    out += fmt::format("{} = {}({}){}{} -> {}\n", names[id], op_label(n), fmt::join(ins, ", "),
                       n.attrs.empty() ? "" : " ", n.attrs.str(), fmt::join(outs, ", "));
  }
  for (auto& o : g.outputs())
    out += fmt::format("output {} = {}\n", o.name, ref_str(g, names, o.ref));
  return out;
}

std::string to_dot(const Graph& g, const std::string& title) {
  auto order = g.topo_order();
  std::string out = fmt::format(
      "digraph \"{}\" {{\n  rankdir=TB;\n  node [fontname=\"Helvetica\"];\n", dot_escape(title));
  for (NodeId id : order) {
    const Node& n = g.node(id);
    // Parts are escaped one by one; the "\\n" between them is DOT's line break.
    std::string label = n.is_source() && n.inputs.empty() && !n.name.empty()
                            ? dot_escape(n.name) + "\\n" + dot_escape(n.outputs[0].str())
                            : dot_escape(op_label(n)) + "\\n" + dot_escape(n.attrs.str());
    const char* shape = n.is_input() ? "ellipse" : n.is_weight() ? "note" : "box";
    out += fmt::format("  n{} [shape={}, label=\"{}\"];\n", id, shape, label);
    for (auto r : n.inputs)
      out += fmt::format("  n{} -> n{} [label=\"{}\"];\n", r.node, id, dot_escape(g.type(r).str()));
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    auto& o = g.outputs()[i];
    out += fmt::format("  out{} [shape=doublecircle, label=\"{}\"];\n  n{} -> out{};\n", i,
                       dot_escape(o.name), o.ref.node, i);
  }
  out += "}\n";
  return out;
}

}  // namespace graphsub
