#include "rules/type_sets.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/error.h"
#include "ir/hash.h"
#include "rules/axiom_ops.h"
#include "rules/inference_cache.h"
#include "rules/instantiate.h"
#include "rules/term.h"
#include "rules/type_prechecks.h"

namespace graphsub::rules {
namespace {

// The result types a subterm may have (ids of the thread's inference cache, sorted), or
// unknown: too many argument combinations to try, or an operator this pass does not know.
struct TypeSet {
  bool unknown = false;
  std::vector<int32_t> ids;
  // Per tensor argument (in order, constants left out): the types of it that some
  // combination type-checks with (sorted). What a parent allows its argument to be.
  std::vector<std::vector<int32_t>> supported;
  std::vector<bool> free;  // per tensor argument: not held to `supported` (its set unknown)
  bool empty() const { return !unknown && ids.empty(); }
};
using TypeSetPtr = std::shared_ptr<const TypeSet>;

// Argument type combinations one application may try before its set is unknown. A fixed
// number, so that what is unknown does not depend on what was computed before; large enough
// for a binary operator over every type of the usual shape space grouped by its type key.
constexpr uint64_t kMaxCombinations = uint64_t{1} << 17;
// Type ids a thread's kept sets may hold in all (64 MB) before it starts over: most
// subterms recur across rules, but a long run meets millions of them.
constexpr size_t kMemoIds = size_t{1} << 24;

void sort_unique(std::vector<int32_t>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

struct Memo {
  std::unordered_map<std::string, TypeSetPtr> sets;
  size_t ids = 0;  // type ids held by `sets`, with the keys' share
};

Memo& thread_memo() {
  static thread_local Memo memo;
  return memo;
}

size_t ids_held(const std::string& key, const TypeSet& s) {
  size_t n = s.ids.size() + key.size() / sizeof(int32_t) + 8;
  for (auto& ids : s.supported) n += ids.size();
  return n;
}

class SetBuilder {
 public:
  SetBuilder(const ParamAssignment& params, const Candidates& candidates)
      : params_(params), candidates_(candidates) {}

  TypeSetPtr of(const TermPtr& t) {
    std::string key = key_of(t);
    Memo& memo = thread_memo();
    if (auto it = memo.sets.find(key); it != memo.sets.end()) return it->second;
    TypeSetPtr s = compute(t);
    size_t n = ids_held(key, *s);
    if (memo.ids + n > kMemoIds) {
      memo.sets.clear();
      memo.ids = 0;
    }
    memo.ids += n;
    memo.sets.emplace(std::move(key), s);
    return s;
  }

 private:
  static TypeSetPtr unknown() {
    static const TypeSetPtr u = std::make_shared<const TypeSet>(TypeSet{.unknown = true});
    return u;
  }

  // The subterm's text with each tensor variable replaced by its candidate list's hash and
  // each parameter by its value: the set depends on nothing else.
  std::string key_of(const TermPtr& t) {
    switch (t->kind) {
      case Term::Kind::Var: {
        if (candidates_.count(t->name)) return class_of(t->name);
        auto p = params_.find(t->name);
        return p == params_.end() ? "?" + t->name : "=" + param_str(p->second);
      }
      case Term::Kind::Int:
        return std::to_string(t->value);
      case Term::Kind::Symbol:
        return t->name;
      case Term::Kind::App: {
        std::string k = "(" + t->name;
        for (auto& a : t->args) k += ' ' + key_of(a);
        return k + ")";
      }
    }
    return "";
  }

  const std::string& class_of(const std::string& var) {
    auto [it, fresh] = classes_.try_emplace(var);
    if (fresh) {
      std::string bytes;
      for (const TensorType& ty : candidates_.at(var)) append_type_key(bytes, ty);
      it->second = fmt::format("#{:x}", hash_bytes(bytes.data(), bytes.size()));
    }
    return it->second;
  }

  TypeSetPtr compute(const TermPtr& t) {
    InferenceCache& cache = InferenceCache::of_thread();
    auto out = std::make_shared<TypeSet>();
    if (t->kind == Term::Kind::Var) {
      auto it = candidates_.find(t->name);
      if (it == candidates_.end()) return unknown();
      for (const TensorType& ty : it->second) out->ids.push_back(cache.type_id(ty));
      sort_unique(out->ids);
      return out;
    }
    const AxiomOp* op = t->kind == Term::Kind::App ? find_axiom_op(t->name) : nullptr;
    if (!op) return unknown();
    const size_t np = op->num_params();
    std::vector<TypeSetPtr> sets;
    std::vector<size_t> positions;  // argument position (after the parameters) of each set
    bool some_unknown = false;
    for (size_t i = np; i < t->args.size(); ++i) {
      if (is_constant_term(t->args[i])) continue;
      TypeSetPtr s = of(t->args[i]);
      if (s->empty()) return s;  // an argument with no type: the application has none
      some_unknown |= s->unknown;
      sets.push_back(std::move(s));
      positions.push_back(i - np);
    }
    // Group each known argument's types by the key all arguments must share
    // (type_prechecks.h); only keys every known argument has can meet.
    std::vector<std::map<TypeKey, std::vector<int32_t>>> groups(sets.size());
    for (size_t k = 0; k < sets.size(); ++k)
      if (!sets[k]->unknown)
        for (int32_t id : sets[k]->ids)
          if (auto key = type_key(*t, *op, positions[k], cache.type(id), params_))
            groups[k][*key].push_back(id);
    std::map<TypeKey, uint64_t> common;  // key -> combinations of the known arguments
    bool first = true;
    for (size_t k = 0; k < sets.size(); ++k) {
      if (sets[k]->unknown) continue;
      std::map<TypeKey, uint64_t> next;
      for (auto& [key, ids] : groups[k]) {
        if (first) {
          next[key] = ids.size();
        } else if (auto it = common.find(key); it != common.end()) {
          next[key] = std::min(it->second * ids.size(), kMaxCombinations + 1);
        }
      }
      common = std::move(next);
      first = false;
      if (common.empty()) return out;  // no key the known arguments share: no type
    }
    uint64_t combinations = sets.empty() ? 1 : 0;
    for (auto& [key, n] : common) combinations = std::min(combinations + n, kMaxCombinations + 1);
    out->supported.resize(sets.size());
    out->free.assign(sets.size(), false);
    if (some_unknown || combinations > kMaxCombinations) {
      // The result is not computed; the arguments are still held to the shared keys.
      out->unknown = true;
      for (size_t k = 0; k < sets.size(); ++k) {
        out->free[k] = sets[k]->unknown;
        for (auto& [key, ids] : groups[k])
          if (common.count(key))
            out->supported[k].insert(out->supported[k].end(), ids.begin(), ids.end());
        sort_unique(out->supported[k]);
      }
      return out;
    }
    const bool unpadded = op->op->name == "conv" && unpadded_conv(*t, params_);
    const size_t nargs = t->args.size() - np;
    const bool cached = nargs <= InferenceCache::kMaxTensorArgs;
    const uint32_t signature =
        cached ? cache.signature_id(application_signature(t, *op, params_)) : 0;
    std::vector<int64_t> arg_ids(nargs, -1);
    auto infer_one = [&]() {
      std::vector<std::optional<TensorType>> args(nargs);
      for (size_t k = 0; k < nargs; ++k)
        if (arg_ids[k] >= 0) args[k] = cache.type(static_cast<int32_t>(arg_ids[k]));
      if (!arguments_may_fit(*op, unpadded, args)) return;
      auto infer = [&]() -> std::optional<TensorType> {
        try {
          return infer_app_type(t, params_, args);
        } catch (const Error&) {
          return std::nullopt;
        }
      };
      int32_t result = -1;
      if (cached) {
        uint64_t ids[InferenceCache::kMaxTensorArgs] = {};
        for (size_t k = 0; k < nargs; ++k)
          ids[k] = arg_ids[k] >= 0 ? static_cast<uint64_t>(arg_ids[k]) + 1 : 0;
        result = cache.result(InferenceCache::key_of(signature, std::span(ids, nargs)), infer);
      } else if (std::optional<TensorType> r = infer()) {
        result = cache.type_id(*r);
      }
      if (result < 0) return;
      out->ids.push_back(result);
      for (size_t k = 0; k < positions.size(); ++k)
        out->supported[k].push_back(static_cast<int32_t>(arg_ids[positions[k]]));
    };
    if (sets.empty()) {
      infer_one();
    } else {
      // Every combination of one type per argument within each key group (an odometer).
      for (auto& [key, n] : common) {
        std::vector<const std::vector<int32_t>*> lists{&groups[0].at(key)};
        for (size_t k = 1; k < sets.size(); ++k) {
          auto it = groups[k].find(key);
          if (it == groups[k].end()) break;
          lists.push_back(&it->second);
        }
        if (lists.size() != sets.size()) continue;
        std::vector<size_t> digit(lists.size(), 0);
        while (true) {
          for (size_t k = 0; k < lists.size(); ++k) arg_ids[positions[k]] = (*lists[k])[digit[k]];
          infer_one();
          size_t k = lists.size();
          while (k > 0 && ++digit[k - 1] == lists[k - 1]->size()) digit[--k] = 0;
          if (k == 0) break;
        }
      }
    }
    sort_unique(out->ids);
    for (auto& ids : out->supported) sort_unique(ids);
    return out;
  }

  const ParamAssignment& params_;
  const Candidates& candidates_;
  std::map<std::string, std::string> classes_;  // tensor variable -> its candidates' hash
};

}  // namespace

bool may_type_check(const Rule& r, const ParamAssignment& params, const Candidates& candidates) {
  SetBuilder sets(params, candidates);
  // A subterm that occurs in several places (a variable, or a value two outputs share) has one
  // type: the one every parent allows. By the subterm's own text, so only equal subterms meet.
  std::map<std::string, std::vector<int32_t>> allowed;
  auto allow = [&](const TermPtr& arg, const std::vector<int32_t>& types) {
    auto [it, first] = allowed.try_emplace(term_str(arg), types);
    if (!first) {
      std::vector<int32_t> both;
      std::set_intersection(it->second.begin(), it->second.end(), types.begin(), types.end(),
                            std::back_inserter(both));
      it->second = std::move(both);
    }
    return !it->second.empty();
  };
  std::function<bool(const TermPtr&)> fits = [&](const TermPtr& t) {
    if (t->kind != Term::Kind::App) return true;
    TypeSetPtr s = sets.of(t);
    if (s->empty()) return false;
    const AxiomOp* op = find_axiom_op(t->name);
    if (!op) return true;
    size_t k = 0;
    for (size_t i = op->num_params(); i < t->args.size(); ++i) {
      if (is_constant_term(t->args[i])) continue;
      if (k < s->supported.size() && !s->free[k] && !allow(t->args[i], s->supported[k]))
        return false;
      ++k;
      if (!fits(t->args[i])) return false;
    }
    return true;
  };
  for (auto* side : {&r.source, &r.target})
    for (auto& t : *side)
      if (!fits(t)) return false;
  return true;
}

}  // namespace graphsub::rules
