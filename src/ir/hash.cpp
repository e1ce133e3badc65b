#include "ir/hash.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

namespace graphsub {

uint64_t hash_bytes(const void* data, size_t n) {
  return XXH3_64bits(data, n);
}

Hasher& Hasher::add(uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));  // little-endian
  buf_.insert(buf_.end(), b, b + 8);
  return *this;
}

Hasher& Hasher::add(std::string_view s) {
  add(static_cast<uint64_t>(s.size()));
  buf_.insert(buf_.end(), s.begin(), s.end());
  return *this;
}

Hasher& Hasher::add(const AttrValue& v) {
  add(static_cast<uint64_t>(v.index()));
  switch (attr_kind(v)) {
    case AttrKind::Int:
      return add(std::get<int64_t>(v));
    case AttrKind::Float: {
      double d = std::get<double>(v);
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      return add(bits);
    }
    case AttrKind::String:
      return add(std::string_view(std::get<std::string>(v)));
    case AttrKind::Ints: {
      auto& xs = std::get<std::vector<int64_t>>(v);
      add(static_cast<uint64_t>(xs.size()));
      for (auto x : xs) add(x);
      return *this;
    }
  }
  return *this;
}

Hasher& Hasher::add(const Attrs& a) {
  add(static_cast<uint64_t>(a.items().size()));
  for (auto& [k, v] : a.items()) add(std::string_view(k)).add(v);
  return *this;
}

static void add_split(Hasher& h, const SplitTreePtr& t) {
  if (!t) {
    h.add(uint64_t{0});
    return;
  }
  h.add(uint64_t{1}).add(t->cut);
  add_split(h, t->left);
  add_split(h, t->right);
}

Hasher& Hasher::add(const TensorType& t) {
  add(static_cast<uint64_t>(t.dtype)).add(static_cast<uint64_t>(t.layout));
  add(static_cast<uint64_t>(t.shape.size()));
  for (auto d : t.shape) add(d);
  for (size_t a = 0; a < t.shape.size(); ++a) add_split(*this, t.split(a));
  return *this;
}

uint64_t Hasher::digest() const {
  return XXH3_64bits(buf_.data(), buf_.size());
}

uint64_t node_hash(const Graph& g, NodeId id, const std::vector<uint64_t>& h) {
  const Node& n = g.node(id);
  Hasher x;
  x.add(std::string_view(n.op->name)).add(n.attrs);
  if (n.is_source()) x.add(std::string_view(n.name));
  x.add(static_cast<uint64_t>(n.outputs.size()));
  for (auto& t : n.outputs) x.add(t);
  for (auto r : n.inputs) x.add(h[r.node]).add(static_cast<uint64_t>(r.output));
  return x.digest();
}

std::vector<uint64_t> node_hashes(const Graph& g) {
  std::vector<uint64_t> h(g.num_slots(), 0);
  for (NodeId id : g.topo_order()) h[id] = node_hash(g, id, h);
  return h;
}

uint64_t structural_hash(const Graph& g) {
  auto h = node_hashes(g);
  std::vector<uint64_t> alive;
  for (NodeId i = 0; i < g.num_slots(); ++i)
    if (g.alive(i)) alive.push_back(h[i]);
  std::sort(alive.begin(), alive.end());  // multiset of nodes: independent of numbering
  Hasher x;
  x.add(static_cast<uint64_t>(alive.size()));
  for (auto v : alive) x.add(v);
  for (auto& o : g.outputs())
    x.add(std::string_view(o.name)).add(h[o.ref.node]).add(static_cast<uint64_t>(o.ref.output));
  return x.digest();
}

}  // namespace graphsub
