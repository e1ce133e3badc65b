#include "opt/match/graph_hashing.h"

#include <algorithm>
#include <cstdint>

#include "ir/hash.h"
#include "opt/match/graph_index.h"

namespace graphsub::opt {

bool topological_order(const Graph& g, std::vector<NodeId>& order) {
  size_t n = g.num_slots();
  std::vector<uint32_t> pending(n, 0), start(n + 1, 0);
  // Consumer edges in CSR form (one per input occurrence).
  for (NodeId i = 0; i < n; ++i) {
    if (!g.alive(i)) continue;
    for (auto r : g.node(i).inputs) {
      if (!g.alive(r.node)) return false;  // dangling: not a valid graph
      ++start[r.node + 1];
      ++pending[i];
    }
  }
  for (size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<NodeId> edges(start[n]);
  std::vector<uint32_t> fill(start.begin(), start.end() - 1);
  for (NodeId i = 0; i < n; ++i) {
    if (!g.alive(i)) continue;
    for (auto r : g.node(i).inputs) edges[fill[r.node]++] = i;
  }
  order.clear();
  for (NodeId i = 0; i < n; ++i)
    if (g.alive(i) && pending[i] == 0) order.push_back(i);
  for (size_t k = 0; k < order.size(); ++k) {
    NodeId v = order[k];
    for (uint32_t e = start[v]; e < start[v + 1]; ++e)
      if (--pending[edges[e]] == 0) order.push_back(edges[e]);
  }
  return order.size() == g.num_nodes();
}

bool rewrite_acyclic(const GraphIndex& ix, const std::vector<uint32_t>& position,
                     const Graph& child, std::vector<NodeId>& order) {
  const Graph& p = ix.graph();
  const size_t n = p.num_slots();
  std::vector<NodeId>& changed = order;  // scratch until the fallback
  changed.clear();
  for (NodeId id = 0; id < child.num_slots(); ++id) {
    bool alive = child.alive(id), was = id < n && p.alive(id);
    if (!alive && was) {  // removed: nothing unchanged may read it any more
      for (NodeId u : ix.consumers(id))
        if (child.alive(u) && &child.node(u) == &p.node(u)) return false;
    } else if (alive && (!was || &child.node(id) != &p.node(id))) {
      changed.push_back(id);
    }
  }
  if (changed.size() > 256) return topological_order(child, order);  // Kahn below is quadratic
  auto in_changed = [&](NodeId id) {
    return std::binary_search(changed.begin(), changed.end(), id);
  };
  // Unchanged nodes keep their parent edges, which go forward in `position`. A cycle must
  // pass through a changed node, leave the changed nodes to an unchanged reader and come
  // back from an unchanged input: impossible when every input comes before every reader.
  int64_t last_input = -1, first_reader = INT64_MAX;
  std::vector<uint32_t> pending(changed.size(), 0);
  for (size_t k = 0; k < changed.size(); ++k) {
    NodeId c = changed[k];
    for (auto r : child.node(c).inputs) {
      if (!child.alive(r.node)) return false;
      if (in_changed(r.node))
        ++pending[k];
      else
        last_input = std::max<int64_t>(last_input, position[r.node]);
    }
    if (c < n && p.alive(c))
      for (NodeId u : ix.consumers(c))
        if (child.alive(u) && !in_changed(u))
          first_reader = std::min<int64_t>(first_reader, position[u]);
  }
  // The changed nodes among themselves (Kahn's algorithm on the few of them).
  std::vector<size_t> ready;
  for (size_t k = 0; k < changed.size(); ++k)
    if (pending[k] == 0) ready.push_back(k);
  size_t done = 0;
  while (!ready.empty()) {
    size_t k = ready.back();
    ready.pop_back();
    ++done;
    for (size_t j = 0; j < changed.size(); ++j)
      for (auto r : child.node(changed[j]).inputs)
        if (r.node == changed[k] && --pending[j] == 0) ready.push_back(j);
  }
  if (done != changed.size()) return false;
  if (last_input < first_reader) return true;
  return topological_order(child, order);
}

std::vector<uint64_t> child_node_hashes(const Graph& parent,
                                        const std::vector<uint64_t>& parent_hash,
                                        const Graph& child,
                                        const std::vector<NodeId>& child_order) {
  std::vector<uint64_t> h(child.num_slots(), 0);
  std::vector<uint8_t> changed(child.num_slots(), 0);
  for (NodeId id : child_order) {
    bool same = id < parent.num_slots() && parent.alive(id) && &parent.node(id) == &child.node(id);
    if (same)
      for (auto r : child.node(id).inputs) same = same && !changed[r.node];
    if (same) {
      h[id] = parent_hash[id];
    } else {
      h[id] = node_hash(child, id, h);
      changed[id] = id >= parent.num_slots() || !parent.alive(id) || h[id] != parent_hash[id];
    }
  }
  return h;
}

// Same bytes as structural_hash() feeds its Hasher (little-endian 64-bit words, strings as
// length then bytes), written into one reserved buffer: this runs once per candidate graph.
uint64_t graph_hash(const Graph& g, const std::vector<uint64_t>& node_hash) {
  std::vector<uint64_t> alive;
  alive.reserve(g.num_nodes());
  for (NodeId i = 0; i < g.num_slots(); ++i)
    if (g.alive(i)) alive.push_back(node_hash[i]);
  std::sort(alive.begin(), alive.end());  // multiset of nodes: independent of numbering
  std::vector<unsigned char> buf;
  buf.reserve(8 * (alive.size() + 1 + 4 * g.outputs().size()) + 64);
  auto word = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) buf.push_back(static_cast<unsigned char>(v >> (8 * i)));
  };
  word(alive.size());
  for (auto v : alive) word(v);
  for (auto& o : g.outputs()) {
    word(o.name.size());
    buf.insert(buf.end(), o.name.begin(), o.name.end());
    word(node_hash[o.ref.node]);
    word(o.ref.output);
  }
  return hash_bytes(buf.data(), buf.size());
}

}  // namespace graphsub::opt
