#include "opt/type_check_memo.h"

#include "ir/hash.h"

namespace graphsub::opt {
namespace {

void mix(uint64_t& h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
}

// Split points are left out of the hash; Entry comparison checks them.
void mix_type(uint64_t& h, const TensorType& t) {
  mix(h, static_cast<uint64_t>(t.dtype));
  mix(h, static_cast<uint64_t>(t.layout));
  mix(h, t.shape.size());
  for (auto d : t.shape) mix(h, static_cast<uint64_t>(d));
}

}  // namespace

uint64_t TypeCheckMemo::key(const Graph& g, const std::vector<TensorRef>& vars,
                            const Params& params) {
  uint64_t h = vars.size();
  for (auto r : vars) mix_type(h, g.type(r));
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

bool TypeCheckMemo::known_failure(const Graph& g, const std::vector<TensorRef>& vars,
                                  const Params& params) const {
  uint64_t k = key(g, vars, params);
  std::lock_guard lock(mu_);
  auto it = failures_.find(k);
  if (it == failures_.end()) return false;
  for (const Entry& e : it->second) {
    if (e.params != params || e.types.size() != vars.size()) continue;
    bool same = true;
    for (size_t i = 0; i < vars.size() && same; ++i) same = e.types[i] == g.type(vars[i]);
    if (same) return true;
  }
  return false;
}

void TypeCheckMemo::add_failure(const Graph& g, const std::vector<TensorRef>& vars,
                                const Params& params) {
  Entry e;
  for (auto r : vars) e.types.push_back(g.type(r));
  e.params = params;
  uint64_t k = key(g, vars, params);
  std::lock_guard lock(mu_);
  failures_[k].push_back(std::move(e));
}

}  // namespace graphsub::opt
