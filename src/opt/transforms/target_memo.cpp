#include "opt/transforms/target_memo.h"

#include "ir/hash.h"

namespace graphsub::opt {
namespace {

void mix(uint64_t& h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
}

// Split points are left out of the hash; the entry comparison checks them.
void mix_type(uint64_t& h, const TensorType& t) {
  mix(h, static_cast<uint64_t>(t.dtype));
  mix(h, static_cast<uint64_t>(t.layout));
  mix(h, t.shape.size());
  for (auto d : t.shape) mix(h, static_cast<uint64_t>(d));
}

// The first variable bound to the same tensor as variable i.
uint32_t same_as_at(const std::vector<TensorRef>& vars, size_t i) {
  for (size_t j = 0; j < i; ++j)
    if (vars[j] == vars[i]) return static_cast<uint32_t>(j);
  return static_cast<uint32_t>(i);
}

std::vector<uint32_t> same_as(const std::vector<TensorRef>& vars) {
  std::vector<uint32_t> s(vars.size());
  for (size_t i = 0; i < vars.size(); ++i) s[i] = same_as_at(vars, i);
  return s;
}

// e.same_as == same_as(vars), without building the latter (find runs per candidate).
bool same_aliasing(const std::vector<uint32_t>& recorded, const std::vector<TensorRef>& vars) {
  if (recorded.size() != vars.size()) return false;
  for (size_t i = 0; i < vars.size(); ++i)
    if (recorded[i] != same_as_at(vars, i)) return false;
  return true;
}

}  // namespace

std::optional<Template> Template::record(const Graph& g, NodeId first,
                                         const std::vector<TensorRef>& vars,
                                         const std::vector<TensorRef>& targets) {
  auto ref = [&](TensorRef r) -> std::optional<Ref> {
    if (r.node >= first) return Ref{false, r.node - first, r.output};
    for (size_t i = 0; i < vars.size(); ++i)
      if (vars[i] == r) return Ref{true, static_cast<uint32_t>(i), 0};
    return std::nullopt;
  };
  Template t;
  for (NodeId id = first; id < g.num_slots(); ++id) {
    if (!g.alive(id)) return std::nullopt;  // ids must map one to one
    const graphsub::Node& n = g.node(id);
    if (n.is_input()) return std::nullopt;
    t.adds_sources = t.adds_sources || n.is_source();
    Node tn{n.op, n.attrs, {}, n.outputs};
    for (auto r : n.inputs) {
      auto x = ref(r);
      if (!x) return std::nullopt;
      tn.inputs.push_back(*x);
    }
    t.nodes.push_back(std::move(tn));
  }
  for (auto r : targets) {
    auto x = ref(r);
    if (!x) return std::nullopt;
    t.targets.push_back(*x);
  }
  return t;
}

std::vector<TensorRef> Template::replay(Graph& g, const std::vector<TensorRef>& vars) const {
  std::vector<TensorRef> out;
  replay(g, vars, out);
  return out;
}

void Template::replay(Graph& g, const std::vector<TensorRef>& vars,
                      std::vector<TensorRef>& out) const {
  auto first = static_cast<NodeId>(g.num_slots());
  auto tensor = [&](const Ref& r) {
    return r.is_var ? vars[r.index] : TensorRef{first + r.index, r.output};
  };
  for (const Node& n : nodes) {
    std::vector<TensorRef> ins;
    ins.reserve(n.inputs.size());
    for (auto& r : n.inputs) ins.push_back(tensor(r));
    NodeId id = g.add_unchecked(*n.op, std::move(ins), n.attrs, {}, n.outputs.size());
    for (uint32_t k = 0; k < n.outputs.size(); ++k) g.set_output_type({id, k}, n.outputs[k]);
  }
  out.clear();
  for (auto& r : targets) out.push_back(tensor(r));
}

uint64_t TargetMemo::key(const Graph& g, const std::vector<TensorRef>& vars, const Params& params) {
  uint64_t h = vars.size();
  for (auto r : vars) mix_type(h, g.type(r));
  for (size_t i = 0; i < vars.size(); ++i) mix(h, same_as_at(vars, i));
  for (auto& p : params) {
    if (!p) {
      mix(h, 1);
    } else if (auto* i = std::get_if<int64_t>(&*p)) {
      mix(h, static_cast<uint64_t>(*i));
    } else {
      const auto& s = std::get<std::string>(*p);
      mix(h, hash_bytes(s.data(), s.size()));
    }
  }
  return h;
}

std::shared_ptr<const TargetMemo::Outcome> TargetMemo::find(const Graph& g,
                                                            const std::vector<TensorRef>& vars,
                                                            const Params& params) const {
  uint64_t k = key(g, vars, params);
  std::lock_guard lock(mu_);
  auto it = entries_.find(k);
  if (it == entries_.end()) return nullptr;
  for (const Entry& e : it->second) {
    if (e.params != params || e.types.size() != vars.size() || !same_aliasing(e.same_as, vars))
      continue;
    bool same = true;
    for (size_t i = 0; i < vars.size() && same; ++i) same = e.types[i] == g.type(vars[i]);
    if (same) return e.outcome;
  }
  return nullptr;
}

void TargetMemo::add(const Graph& g, const std::vector<TensorRef>& vars, const Params& params,
                     Outcome outcome) {
  Entry e;
  for (auto r : vars) e.types.push_back(g.type(r));
  e.same_as = same_as(vars);
  e.params = params;
  e.outcome = std::make_shared<const Outcome>(std::move(outcome));
  uint64_t k = key(g, vars, params);
  std::lock_guard lock(mu_);
  entries_[k].push_back(std::move(e));
}

}  // namespace graphsub::opt
