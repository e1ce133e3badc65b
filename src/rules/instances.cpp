#include "rules/instances.h"

#include <fmt/format.h>

#include <deque>
#include <memory>
#include <optional>

#include "core/error.h"
#include "rules/axiom_ops.h"
#include "rules/conditions.h"
#include "rules/inference_cache.h"
#include "rules/instantiate.h"
#include "rules/type_prechecks.h"

namespace graphsub::rules {

std::vector<ParamAssignment> param_assignments(const Rule& r, const RuleSet& domains) {
  std::vector<const ParamDomain*> doms;
  for (auto& p : r.param_vars) {
    const ParamDomain* d = domains.domain(p.domain);
    if (!d)
      throw Error(
          fmt::format("{}: parameter ?{} has undeclared domain '{}'", r.name, p.name, p.domain));
    doms.push_back(d);
  }
  // Conditions that mention shapes wait for the shapes; the others filter here.
  std::vector<TermPtr> param_only;
  for (auto& c : r.constraints)
    if (!conditions_use_shapes({c})) param_only.push_back(c);
  uint64_t combinations = 1;
  for (const ParamDomain* d : doms) {
    combinations *= d->values.size();
    if (combinations > kMaxParamAssignments)
      throw Error(fmt::format(
          "{}: its {} parameter variables have more than {} assignments (the limit of bounded "
          "testing)",
          r.name, doms.size(), kMaxParamAssignments));
  }
  // An odometer over the domains, the last parameter fastest (no recursion: one level per
  // parameter variable would be a stack overflow on a hostile file).
  std::vector<ParamAssignment> out;
  if (combinations == 0) return out;
  std::vector<size_t> digit(doms.size(), 0);
  ParamAssignment cur;
  for (size_t i = 0; i < doms.size(); ++i)
    cur[r.param_vars[i].name] = param_value(*doms[i]->values[0]);
  while (true) {
    if (conditions_hold(param_only, cur, {})) out.push_back(cur);
    size_t i = doms.size();
    while (i > 0 && ++digit[i - 1] == doms[i - 1]->values.size()) {
      digit[i - 1] = 0;
      cur[r.param_vars[i - 1].name] = param_value(*doms[i - 1]->values[0]);
      --i;
    }
    if (i == 0) return out;
    cur[r.param_vars[i - 1].name] = param_value(*doms[i - 1]->values[digit[i - 1]]);
  }
}

namespace {

// Where a tensor variable occurs: inside a convolution kernel, elsewhere, or both.
void mark_roles(const Term& t, bool kernel, std::map<std::string, std::pair<bool, bool>>& roles) {
  if (t.kind == Term::Kind::Var) {
    auto& r = roles[t.name];
    (kernel ? r.first : r.second) = true;
    return;
  }
  const AxiomOp* op = find_axiom_op(t.name);
  if (!op) return;
  size_t np = op->num_params();
  // Kernels stay kernels through element-wise operators and concat/split (along any axis the
  // spatial dimensions keep their sizes).
  bool passes = op->op->elementwise || op->op->name == "concat" || op->op->name == "split";
  for (size_t i = np; i < t.args.size(); ++i) {
    size_t k = i - np;
    bool child =
        (op->op->name == "conv" && k == 1) || op->op->name == "enlarge" || (kernel && passes);
    mark_roles(*t.args[i], child, roles);
  }
}

void all_shapes(size_t rank, const std::vector<int64_t>& dims, const std::vector<int64_t>& spatial,
                bool kernel, Shape& cur, std::vector<Shape>& out) {
  if (cur.size() == rank) {
    out.push_back(cur);
    return;
  }
  const auto& ds = kernel && rank == 4 && cur.size() >= 2 ? spatial : dims;
  for (int64_t d : ds) {
    cur.push_back(d);
    all_shapes(rank, dims, spatial, kernel, cur, out);
    cur.pop_back();
  }
}

// The well-typed partial instances of a subterm: per entry, the candidate index of each
// tensor variable (-1 where the subterm does not bind it) and the subterm's type, as an id in
// the enumerator's table of distinct types. Flat storage: a few allocations per list instead
// of several per entry (the enumeration makes many entries).
class Partials {
 public:
  explicit Partials(size_t num_vars) : nv_(num_vars) {}
  size_t size() const { return types_.size(); }
  const int16_t* idx(size_t e) const { return idx_.data() + e * nv_; }
  uint32_t type(size_t e) const { return types_[e]; }
  void push(const int16_t* idx, uint32_t type) {
    idx_.insert(idx_.end(), idx, idx + nv_);
    types_.push_back(type);
  }

 private:
  size_t nv_;
  std::vector<int16_t> idx_;
  std::vector<uint32_t> types_;
};

class Enumerator {
 public:
  Enumerator(const Rule& r, const ParamAssignment& params, const Candidates& candidates,
             size_t max_partials)
      : r_(r), params_(params), max_partials_(max_partials) {
    for (auto& v : r.tensor_vars) {
      index_[v] = static_cast<int>(names_.size());
      names_.push_back(v);
      auto it = candidates.find(v);
      if (it == candidates.end())
        throw Error(fmt::format("{}: no candidate shapes for ?{}", r.name, v));
      cands_.push_back(&it->second);
    }
  }

  bool run(const std::function<bool(const Instance&)>& visit) {
    Instance inst;
    inst.params = params_;
    return run_indices([&](const std::vector<int16_t>& idx) {
      fill(inst, idx);
      return visit(inst);
    });
  }

  // The instance of one combination of candidate indices (one per tensor variable).
  void fill(Instance& inst, const int16_t* idx) const {
    // Same keys every time: assignment reuses the map's nodes.
    for (size_t v = 0; v < names_.size(); ++v)
      inst.tensors[names_[v]] = (*cands_[v])[static_cast<size_t>(idx[v])];
  }
  void fill(Instance& inst, const std::vector<int16_t>& idx) const { fill(inst, idx.data()); }
  size_t num_vars() const { return names_.size(); }

  // Like run, with the candidate indices of each instance instead of the instance (no copies
  // of types where no condition needs them).
  bool run_indices(const std::function<bool(const std::vector<int16_t>&)>& visit) {
    std::vector<const Partials*> lists;
    std::vector<uint64_t> masks;
    uint64_t covered = 0;
    for (auto* side : {&r_.source, &r_.target})
      for (auto& t : *side) {
        lists.push_back(&sols(t));
        // A side with no well-typed instance leaves the rule none: the rest is not searched.
        if (lists.back()->size() == 0) return true;
        masks.push_back(mask(t));
        covered |= masks.back();
      }
    // Variables that only a (dim ...) condition mentions still need shapes.
    for (size_t v = 0; v < names_.size(); ++v)
      if (!(covered & (uint64_t{1} << v))) {
        TermPtr t = Term::var(names_[v]);
        lists.push_back(&sols(t));
        masks.push_back(mask(t));
      }
    Instance inst;
    inst.params = params_;
    return join(lists, masks, [&](const std::vector<int16_t>& idx, const std::vector<uint32_t>&) {
      if (!r_.constraints.empty()) {
        fill(inst, idx);
        if (!conditions_hold(r_.constraints, inst.params, inst.tensors)) return true;
      }
      return visit(idx);
    });
  }

 private:
  uint64_t mask(const TermPtr& t) {
    if (t->kind == Term::Kind::Var) {
      auto it = index_.find(t->name);
      return it == index_.end() ? 0 : uint64_t{1} << it->second;
    }
    uint64_t m = 0;
    for (auto& a : t->args) m |= mask(a);
    return m;
  }

  // Calls emit(idx, types) for every combination of one entry per list that agrees on shared
  // variables and, when `key` is given, on the type keys of the entries; stops when emit
  // returns false.
  using Emit = std::function<bool(const std::vector<int16_t>&, const std::vector<uint32_t>&)>;
  using KeyFn = std::function<std::optional<TypeKey>(size_t list, const TensorType&)>;
  bool join(const std::vector<const Partials*>& lists, const std::vector<uint64_t>& masks,
            const Emit& emit, const KeyFn& key = nullptr) {
    size_t n = lists.size();
    // For each list after the first, an index of its entries by their values on the variables
    // shared with the lists before it, followed by their type key.
    std::vector<std::vector<int>> shared(n);
    std::vector<std::map<std::vector<int64_t>, std::vector<size_t>>> index(n);
    std::vector<bool> indexed(n, false);
    uint64_t bound = 0;
    for (size_t i = 0; i < n; ++i) {
      for (size_t v = 0; v < names_.size(); ++v)
        if ((bound & masks[i]) & (uint64_t{1} << v)) shared[i].push_back(static_cast<int>(v));
      indexed[i] = i > 0 && (!shared[i].empty() || key);
      if (indexed[i])
        for (size_t e = 0; e < lists[i]->size(); ++e) {
          const int16_t* pidx = lists[i]->idx(e);
          std::vector<int64_t> k;
          for (int v : shared[i]) k.push_back(pidx[static_cast<size_t>(v)]);
          if (key) {
            auto tk = key(i, type_of(lists[i]->type(e)));
            if (!tk) continue;
            k.insert(k.end(), tk->begin(), tk->end());
          }
          index[i][k].push_back(e);
        }
      bound |= masks[i];
    }
    std::vector<int16_t> idx(names_.size(), -1);
    std::vector<uint32_t> types(n, 0);
    TypeKey first_key;
    std::vector<std::vector<int64_t>> lookup(n);  // per-level key buffers, reused
    // Variables each list binds that no earlier list does (shared ones already agree).
    std::vector<std::vector<size_t>> fresh(n);
    uint64_t seen = 0;
    for (size_t i = 0; i < n; ++i) {
      for (size_t v = 0; v < names_.size(); ++v)
        if ((masks[i] & ~seen) & (uint64_t{1} << v)) fresh[i].push_back(v);
      seen |= masks[i];
    }
    std::function<bool(size_t)> rec = [&](size_t i) -> bool {
      if (i == n) return emit(idx, types);
      const Partials& list = *lists[i];
      auto take = [&](size_t e) -> bool {
        const int16_t* pidx = list.idx(e);
        for (size_t v : fresh[i]) idx[v] = pidx[v];
        types[i] = list.type(e);
        bool go = rec(i + 1);
        for (size_t v : fresh[i]) idx[v] = -1;
        return go;
      };
      if (!indexed[i]) {
        for (size_t e = 0; e < list.size(); ++e) {
          if (i == 0 && key) {
            auto tk = key(0, type_of(list.type(e)));
            if (!tk) continue;
            first_key = std::move(*tk);
          }
          if (!take(e)) return false;
        }
        return true;
      }
      std::vector<int64_t>& k = lookup[i];
      k.clear();
      for (int v : shared[i]) k.push_back(idx[static_cast<size_t>(v)]);
      if (key) k.insert(k.end(), first_key.begin(), first_key.end());
      auto it = index[i].find(k);
      if (it == index[i].end()) return true;
      for (size_t e : it->second)
        if (!take(e)) return false;
      return true;
    };
    return rec(0);
  }

  // The well-typed (shapes, type) pairs of a subterm, memoized by its text.
  const Partials& sols(const TermPtr& t) {
    std::string key = term_str(t);
    auto it = memo_.find(key);
    if (it != memo_.end()) return *it->second;
    auto out = std::make_unique<Partials>(names_.size());
    if (t->kind == Term::Kind::Var) {
      int v = index_.at(t->name);
      const auto& c = *cands_[static_cast<size_t>(v)];
      std::vector<int16_t> idx(names_.size(), -1);
      for (size_t i = 0; i < c.size(); ++i) {
        idx[static_cast<size_t>(v)] = static_cast<int16_t>(i);
        out->push(idx.data(), intern(c[i]));
        count_partial();
      }
    } else {
      const AxiomOp* op = find_axiom_op(t->name);
      if (!op) throw Error(fmt::format("unknown operator '{}'", t->name));
      size_t np = op->num_params();
      std::vector<const Partials*> lists;
      std::vector<uint64_t> masks;
      std::vector<size_t> positions;  // argument position of each list
      bool none = false;  // an argument without a well-typed instance: the application has none
      for (size_t i = np; i < t->args.size() && !none; ++i)
        if (!is_constant_term(t->args[i])) {
          lists.push_back(&sols(t->args[i]));
          none = lists.back()->size() == 0;
          masks.push_back(mask(t->args[i]));
          positions.push_back(i - np);
        }
      if (none) return *memo_.emplace(key, std::move(out)).first->second;
      // Argument type ids (-1: a constant, sized by the inference) -> result type id (-1: not
      // well-typed). Many bindings give the same argument types: infer once per distinct types.
      std::vector<int64_t> arg_ids(t->args.size() - np, -1);
      std::map<std::vector<int64_t>, int64_t> infer_cache;
      // The thread's cache across rules keys on the application's signature (at most
      // kMaxTensorArgs tensor arguments); this table keys on this subterm's argument types.
      const bool thread_cached = arg_ids.size() <= InferenceCache::kMaxTensorArgs;
      const uint32_t signature =
          thread_cached ? cache_.signature_id(application_signature(t, *op, params_)) : 0;
      const bool unpadded = op->op->name == "conv" && unpadded_conv(*t, params_);
      KeyFn key = [&](size_t list, const TensorType& ty) {
        return type_key(*t, *op, positions[list], ty, params_);
      };
      join(
          lists, masks,
          [&](const std::vector<int16_t>& idx, const std::vector<uint32_t>& types) {
            for (size_t k = 0; k < positions.size(); ++k) arg_ids[positions[k]] = types[k];
            auto it = infer_cache.find(arg_ids);
            if (it == infer_cache.end()) {
              std::vector<std::optional<TensorType>> args(arg_ids.size());
              for (size_t k = 0; k < args.size(); ++k)
                if (arg_ids[k] >= 0) args[k] = type_of(static_cast<uint32_t>(arg_ids[k]));
              int64_t result = -1;
              if (arguments_may_fit(*op, unpadded, args)) {
                auto infer = [&]() -> std::optional<TensorType> {
                  try {
                    return infer_app_type(t, params_, args);
                  } catch (const Error&) {
                    return std::nullopt;  // not well-typed for these types: no instance
                  }
                };
                if (thread_cached) {
                  uint64_t ids[InferenceCache::kMaxTensorArgs] = {};
                  for (size_t k = 0; k < arg_ids.size(); ++k)
                    ids[k] = arg_ids[k] >= 0 ? static_cast<uint64_t>(arg_ids[k]) + 1 : 0;
                  result = cache_.result(
                      InferenceCache::key_of(signature, std::span(ids, arg_ids.size())), infer);
                } else if (std::optional<TensorType> r = infer()) {
                  result = intern(*r);
                }
              }
              it = infer_cache.emplace(arg_ids, result).first;
            }
            if (it->second >= 0) {
              out->push(idx.data(), static_cast<uint32_t>(it->second));
              count_partial();
            }
            return true;
          },
          key);
    }
    return *memo_.emplace(key, std::move(out)).first->second;
  }

  void count_partial() {
    if (++partials_ > max_partials_)
      throw InstanceSearchTooLarge(
          fmt::format("{}: instance search too large (over {} partial instances; {} tensor "
                      "variables): test it at fewer shapes",
                      r_.name, max_partials_, names_.size()));
  }

  // Types are numbered by the thread's inference cache, whose results are type ids.
  uint32_t intern(const TensorType& t) { return static_cast<uint32_t>(cache_.type_id(t)); }
  const TensorType& type_of(uint32_t id) const { return cache_.type(static_cast<int32_t>(id)); }

  const Rule& r_;
  const ParamAssignment& params_;
  InferenceCache& cache_ = InferenceCache::of_thread();
  std::vector<std::string> names_;
  std::map<std::string, int> index_;
  std::vector<const std::vector<TensorType>*> cands_;
  std::map<std::string, std::unique_ptr<Partials>> memo_;
  size_t max_partials_;
  size_t partials_ = 0;  // entries of all partial lists so far
};

}  // namespace

Candidates candidate_types(const Rule& r, const ShapeSpace& space, bool with_splits) {
  std::map<std::string, std::pair<bool, bool>> roles;
  for (auto* side : {&r.source, &r.target})
    for (auto& t : *side) mark_roles(*t, false, roles);
  const auto& dims = with_splits ? space.split_dims : space.dims;
  Candidates out;
  for (auto& v : r.tensor_vars) {
    auto it = roles.find(v);
    bool kernel_only = it != roles.end() && it->second.first && !it->second.second;
    std::vector<Shape> shapes;
    if (!dims.empty())
      for (int64_t rank : space.ranks) {
        Shape cur;
        all_shapes(static_cast<size_t>(rank), dims, space.kernel_dims, kernel_only, cur, shapes);
      }
    auto& types = out[v];
    for (auto& s : shapes) {
      types.push_back(TensorType{.shape = s});
      if (!with_splits) continue;
      // As if the variable were concat(a, part of size 1, rest).
      for (size_t a = 0; a < s.size(); ++a) {
        if (s[a] < 2) continue;
        TensorType t{.shape = s};
        t.set_split(a, std::make_shared<const SplitTree>(SplitTree{.cut = 1}));
        types.push_back(std::move(t));
      }
    }
  }
  return out;
}

void require_searchable(const Rule& r) {
  if (r.tensor_vars.size() > kMaxTensorVars)
    throw Error(
        fmt::format("{}: {} tensor variables, more than the {} that instance search handles",
                    r.name, r.tensor_vars.size(), kMaxTensorVars));
}

bool for_each_instance(const Rule& r, const ParamAssignment& params, const Candidates& candidates,
                       const std::function<bool(const Instance&)>& visit, size_t max_partials) {
  require_searchable(r);
  return Enumerator(r, params, candidates, max_partials).run(visit);
}

std::vector<Instance> spread_instances(const Rule& r, const ParamAssignment& params,
                                       const Candidates& candidates, size_t k, size_t limit,
                                       size_t max_partials) {
  require_searchable(r);
  Enumerator en(r, params, candidates, max_partials);
  size_t nv = en.num_vars();
  std::vector<int16_t> all;  // the first `limit` instances, nv indices each
  size_t count = 0;
  en.run_indices([&](const std::vector<int16_t>& idx) {
    all.insert(all.end(), idx.begin(), idx.end());
    return ++count < limit;
  });
  size_t n = std::min(count, k);
  std::vector<Instance> out(n);
  for (size_t i = 0; i < n; ++i) {
    size_t at = n == 1 ? 0 : i * (count - 1) / (n - 1);
    out[i].params = params;
    en.fill(out[i], all.data() + at * nv);
  }
  return out;
}

std::string instance_str(const Instance& in) {
  std::vector<std::string> parts;
  for (auto& [k, v] : in.params) parts.push_back(fmt::format("?{}={}", k, param_str(v)));
  for (auto& [k, t] : in.tensors) parts.push_back(fmt::format("?{}:{}", k, t.str()));
  return fmt::format("{}", fmt::join(parts, " "));
}

}  // namespace graphsub::rules
