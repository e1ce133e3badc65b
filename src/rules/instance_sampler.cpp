// A few well-typed instances of a rule, found by a seeded randomized depth-first search over
// its tensor variables (declared in rules/instances.h as sample_instances).
//
// The verifier's numeric test wants a handful of instances per parameter assignment, not all
// of them. Enumerating every well-typed instance bottom-up (for_each_instance) to pick a few
// was most of the verifier's time: a rule over four variables at ranks 0, 2 and 4 has up to
// 10^5 of them. Here each sample is the first instance of a depth-first search that binds one
// variable at a time, tries its candidate shapes in a random order, and checks every subterm as
// soon as its variables are bound, so a search usually visits a few dozen assignments.
#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <unordered_map>

#include "core/error.h"
#include "ir/hash.h"
#include "rules/axiom_ops.h"
#include "rules/conditions.h"
#include "rules/inference_cache.h"
#include "rules/instances.h"
#include "rules/instantiate.h"
#include "rules/type_prechecks.h"
#include "rules/type_sets.h"

namespace graphsub::rules {
namespace {

// Bindings one search may try before the bottom-up enumeration takes over: a rule that
// type-checks at all usually gives an instance within a few dozen.
constexpr size_t kStepsPerSearch = 4096;
class Sampler {
 public:
  Sampler(const Rule& r, const ParamAssignment& params, const Candidates& candidates,
          size_t max_steps)
      : r_(r), params_(params), max_steps_(max_steps), cache_(InferenceCache::of_thread()) {
    for (auto& v : r.tensor_vars) {
      auto it = candidates.find(v);
      if (it == candidates.end())
        throw Error(fmt::format("{}: no candidate shapes for ?{}", r.name, v));
      var_index_[v] = static_cast<int>(vars_.size());
      Var var{.name = v, .cands = &it->second, .ids = {}};
      for (auto& t : it->second) var.ids.push_back(cache_.type_id(t));
      vars_.push_back(std::move(var));
    }
    for (auto* side : {&r.source, &r.target})
      for (auto& t : *side) add_node(t);
    // Variables in order of first use, so that subterms are checked as early as possible;
    // those only a condition mentions come last.
    for (auto& n : nodes_)
      if (n.var >= 0 && level_of_var_.try_emplace(n.var, order_.size()).second)
        order_.push_back(n.var);
    for (int v = 0; v < static_cast<int>(vars_.size()); ++v)
      if (level_of_var_.try_emplace(v, order_.size()).second) order_.push_back(v);
    checks_.resize(order_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      int level = -1;
      for (int v : nodes_[i].vars) level = std::max(level, static_cast<int>(level_of_var_[v]));
      if (level < 0)
        ground_.push_back(i);
      else
        checks_[static_cast<size_t>(level)].push_back(i);
    }
    types_.assign(nodes_.size(), -1);
    choice_.assign(vars_.size(), -1);
  }

  enum class Outcome { Found, None, OutOfSteps };
  // Looks for the first instance (candidate index per variable, then in choice()) in the order
  // `seed` gives: Found, None when no instance type-checks, OutOfSteps past the step bound.
  Outcome search(uint64_t seed) {
    steps_ = 0;
    for (size_t i : ground_)
      if (!check(i)) return Outcome::None;
    perms_.assign(order_.size(), {});
    for (size_t l = 0; l < order_.size(); ++l) {
      auto& p = perms_[l];
      p.resize(vars_[static_cast<size_t>(order_[l])].ids.size());
      for (size_t k = 0; k < p.size(); ++k) p[k] = static_cast<int16_t>(k);
      // Not std::shuffle, whose algorithm is not specified: the samples are the same everywhere.
      for (size_t k = p.size(); k > 1; --k) std::swap(p[k - 1], p[splitmix64(seed) % k]);
    }
    try {
      return dfs(0) ? Outcome::Found : Outcome::None;
    } catch (const OutOfSteps&) {
      std::fill(choice_.begin(), choice_.end(), -1);
      return Outcome::OutOfSteps;
    }
  }
  const std::vector<int16_t>& choice() const { return choice_; }

  void fill(Instance& in, const std::vector<int16_t>& choice) const {
    in.params = params_;
    in.tensors.clear();
    for (size_t v = 0; v < vars_.size(); ++v)
      in.tensors[vars_[v].name] = (*vars_[v].cands)[static_cast<size_t>(choice[v])];
  }

 private:
  struct OutOfSteps {};
  struct Var {
    std::string name;
    const std::vector<TensorType>* cands;
    std::vector<int32_t> ids;  // type id of each candidate (InferenceCache)
  };
  // A distinct subterm (shared subterms are checked once), children before parents.
  struct Node {
    TermPtr term;
    const AxiomOp* op = nullptr;
    bool unpadded_conv = false;  // a conv with `valid` padding
    int var = -1;                // a tensor variable
    std::vector<int> args;       // node of each tensor argument, -1 for a constant
    std::vector<int> vars;       // variables it reads
    // The application without its tensor arguments (operator, parameter values, constants):
    // with the argument types, the key of the thread's inference cache.
    uint32_t signature = 0;
  };

  int add_node(const TermPtr& t) {
    std::string key = term_str(t);
    if (auto it = node_of_.find(key); it != node_of_.end()) return it->second;
    Node n;
    n.term = t;
    if (t->kind == Term::Kind::Var) {
      n.var = var_index_.at(t->name);
      n.vars = {n.var};
    } else {
      const AxiomOp* op = find_axiom_op(t->name);
      if (!op) throw Error(fmt::format("unknown operator '{}'", t->name));
      n.op = op;
      n.unpadded_conv = op->op->name == "conv" && unpadded_conv(*t, params_);
      n.signature = cache_.signature_id(application_signature(t, *op, params_));
      for (size_t i = op->num_params(); i < t->args.size(); ++i) {
        if (is_constant_term(t->args[i])) {
          n.args.push_back(-1);
          continue;
        }
        int a = add_node(t->args[i]);
        n.args.push_back(a);
        for (int v : nodes_[static_cast<size_t>(a)].vars)
          if (std::find(n.vars.begin(), n.vars.end(), v) == n.vars.end()) n.vars.push_back(v);
      }
      if (n.args.size() > InferenceCache::kMaxTensorArgs)
        throw Error(fmt::format("{}: {} has more than {} tensor arguments", r_.name, t->name,
                                InferenceCache::kMaxTensorArgs));
    }
    nodes_.push_back(std::move(n));
    int id = static_cast<int>(nodes_.size()) - 1;
    node_of_.emplace(std::move(key), id);
    return id;
  }

  // Types node i from its arguments' types; false when it does not type-check.
  bool check(size_t i) {
    Node& n = nodes_[i];
    if (n.var >= 0) {
      types_[i] = vars_[static_cast<size_t>(n.var)].ids[static_cast<size_t>(choice_[n.var])];
      return true;
    }
    uint64_t arg_ids[InferenceCache::kMaxTensorArgs] =
        {};  // type id + 1 of each tensor argument, 0: constant
    for (size_t k = 0; k < n.args.size(); ++k)
      if (n.args[k] >= 0)
        arg_ids[k] = static_cast<uint64_t>(types_[static_cast<size_t>(n.args[k])]) + 1;
    const InferenceCache::Key key = InferenceCache::key_of(n.signature, arg_ids);
    types_[i] = cache_.result(key, [&] {
      std::vector<std::optional<TensorType>> args;
      for (int a : n.args)
        args.push_back(
            a < 0 ? std::nullopt
                  : std::optional<TensorType>(cache_.type(types_[static_cast<size_t>(a)])));
      std::optional<TensorType> result;
      if (may_fit(n, args)) {
        try {
          result = infer_app_type(n.term, params_, args);
        } catch (const Error&) {
          // Not well-typed for these argument types.
        }
      }
      return result;
    });
    return types_[i] >= 0;
  }

  // The cheap necessary conditions of type_prechecks.h, so that most ill-typed combinations
  // are rejected without running (and throwing from) shape inference.
  bool may_fit(const Node& n, const std::vector<std::optional<TensorType>>& args) const {
    std::optional<TypeKey> first;
    for (size_t k = 0; k < args.size(); ++k) {
      if (!args[k]) continue;
      std::optional<TypeKey> key = type_key(*n.term, *n.op, k, *args[k], params_);
      if (!key) return false;
      if (!first)
        first = std::move(key);
      else if (*key != *first)
        return false;
    }
    return arguments_may_fit(*n.op, n.unpadded_conv, args);
  }

  bool dfs(size_t level) {
    if (level == order_.size()) {
      if (r_.constraints.empty()) return true;
      fill(scratch_, choice_);
      return conditions_hold(r_.constraints, params_, scratch_.tensors);
    }
    int v = order_[level];
    for (int16_t c : perms_[level]) {
      if (++steps_ > max_steps_) throw OutOfSteps{};
      choice_[v] = c;
      bool ok = true;
      for (size_t i : checks_[level])
        if (!(ok = check(i))) break;
      if (ok && dfs(level + 1)) return true;
    }
    choice_[v] = -1;
    return false;
  }

  const Rule& r_;
  const ParamAssignment& params_;
  size_t max_steps_;
  size_t steps_ = 0;
  std::vector<Var> vars_;
  std::map<std::string, int> var_index_;
  std::vector<Node> nodes_;
  std::map<std::string, int> node_of_;
  std::vector<int> order_;  // variable bound at each level
  std::map<int, size_t> level_of_var_;
  std::vector<std::vector<size_t>> checks_;  // nodes whose last variable is bound at a level
  std::vector<size_t> ground_;               // nodes that read no variable
  std::vector<std::vector<int16_t>> perms_;  // candidate order per level, this search
  std::vector<int32_t> types_;               // per node, the current binding's type id
  std::vector<int16_t> choice_;              // per variable, the current candidate index
  InferenceCache& cache_;                    // also numbers the types in types_ and Var::ids
  Instance scratch_;
};

}  // namespace

std::vector<Instance> sample_instances(const Rule& r, const ParamAssignment& params,
                                       const Candidates& candidates, size_t k, uint64_t seed,
                                       size_t max_partials) {
  require_searchable(r);
  Sampler s(r, params, candidates, kStepsPerSearch);
  std::vector<std::vector<int16_t>> found;
  for (size_t i = 0; i < k; ++i) {
    uint64_t run_seed = seed ^ (0xD1B54A32D192ED03ull * (i + 1));
    Sampler::Outcome o = s.search(run_seed);
    if (o == Sampler::Outcome::None) break;  // the search was exhaustive: no instance at all
    if (o == Sampler::Outcome::OutOfSteps) {
      if (found.empty()) {
        // Rules that never type-check end here; most are settled by their type sets, without
        // the search over every binding.
        if (!may_type_check(r, params, candidates)) return {};
        return spread_instances(r, params, candidates, k, 100000, max_partials);
      }
      break;
    }
    if (std::find(found.begin(), found.end(), s.choice()) == found.end())
      found.push_back(s.choice());
  }
  std::vector<Instance> out(found.size());
  for (size_t i = 0; i < found.size(); ++i) s.fill(out[i], found[i]);
  return out;
}

}  // namespace graphsub::rules
