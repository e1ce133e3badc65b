#include <fmt/format.h>

#include <set>

#include "core/error.h"
#include "ir/graph.h"

namespace graphsub {

void validate(const Graph& g) {
  std::set<std::string> names;
  for (NodeId id = 0; id < g.num_slots(); ++id) {
    if (!g.alive(id)) continue;
    const Node& n = g.node(id);
    for (auto r : n.inputs) {
      if (!g.alive(r.node) || r.output >= g.node(r.node).outputs.size())
        throw Error(
            fmt::format("{} reads dangling tensor {}:{}", g.describe(id), r.node, r.output));
    }
    if ((n.is_input() || n.is_weight()) && !names.insert(n.name).second)
      throw Error(fmt::format("duplicate input/weight name '{}' ({})", n.name, g.describe(id)));
  }
  std::set<std::string> out_names;
  for (auto& o : g.outputs()) {
    if (!g.alive(o.ref.node) || o.ref.output >= g.node(o.ref.node).outputs.size())
      throw Error(fmt::format("graph output '{}' refers to dangling tensor {}:{}", o.name,
                              o.ref.node, o.ref.output));
    if (!out_names.insert(o.name).second)
      throw Error(fmt::format("duplicate graph output name '{}'", o.name));
  }
  for (NodeId id : g.topo_order()) {  // throws on cycles
    const Node& n = g.node(id);
    if (n.is_input() || n.is_weight() || n.op->cls == OpClass::Opaque) continue;
    std::vector<TensorType> in;
    for (auto r : n.inputs) in.push_back(g.type(r));
    std::vector<TensorType> out;
    try {
      check_arity(*n.op, in.size());
      out = n.op->infer(normalize_attrs(*n.op, n.attrs), in);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", g.describe(id), e.what()));
    }
    if (out != n.outputs) {
      std::vector<std::string> want, have;
      for (auto& t : out) want.push_back(t.str());
      for (auto& t : n.outputs) have.push_back(t.str());
      throw Error(fmt::format("{}: stored output types {} differ from inferred {}", g.describe(id),
                              fmt::join(have, " "), fmt::join(want, " ")));
    }
  }
}

}  // namespace graphsub
