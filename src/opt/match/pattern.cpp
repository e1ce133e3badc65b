#include "opt/match/pattern.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/error.h"
#include "opt/match/scratch_pool.h"
#include "rules/axiom_ops.h"

namespace graphsub::opt {

using rules::Term;
using rules::TermPtr;

struct Pattern::State {
  std::vector<TensorRef> tensors;  // per pattern node
  std::vector<uint8_t> assigned;
  std::vector<TensorRef> vars;  // per tensor variable
  std::vector<uint8_t> var_bound;
  std::vector<std::optional<AxiomParam>> params;
};

struct Pattern::Scratch {
  std::vector<State> states;                  // per root level
  std::vector<std::vector<TensorRef>> cands;  // per root level: root_candidates
  std::vector<std::pair<int, size_t>> path;   // root_candidates: (pattern node, argument)
  std::vector<TensorRef> next;                // root_candidates: the next level up
  std::vector<TensorRef> outs;                // complete: the match's outputs, sorted
  std::vector<NodeId> internal;               // complete: its operator nodes, sorted
  size_t limit = 0;                           // matches at most (match_limit)
};

namespace {

int index_of(std::vector<std::string>& names, const std::string& n) {
  auto it = std::find(names.begin(), names.end(), n);
  if (it != names.end()) return static_cast<int>(it - names.begin());
  names.push_back(n);
  return static_cast<int>(names.size() - 1);
}

// What a constraint sees: parameter values and the tensors bound to tensor variables.
struct Scope {
  const std::vector<std::string>& param_names;
  const std::vector<std::optional<AxiomParam>>& params;
  const std::vector<std::string>& tensor_names;
  const std::vector<TensorRef>& tensors;
  const std::vector<uint8_t>& tensor_bound;
  const Graph& g;
};

// Value of a parameter-level term in a constraint: a bound variable, a literal, or
// (dim ?t AXIS), the size of an axis of a bound tensor.
std::optional<AxiomParam> operand(const Term& t, const Scope& s) {
  if (t.kind == Term::Kind::Var) {
    auto it = std::find(s.param_names.begin(), s.param_names.end(), t.name);
    if (it == s.param_names.end()) return std::nullopt;
    return s.params[static_cast<size_t>(it - s.param_names.begin())];
  }
  if (t.kind == Term::Kind::Int) return AxiomParam{t.value};
  if (t.kind == Term::Kind::Symbol) return AxiomParam{t.name};
  if (t.kind == Term::Kind::App && t.name == "dim" && t.args.size() == 2) {
    auto it = std::find(s.tensor_names.begin(), s.tensor_names.end(), t.args[0]->name);
    if (it == s.tensor_names.end()) return std::nullopt;
    auto v = static_cast<size_t>(it - s.tensor_names.begin());
    if (!s.tensor_bound[v]) return std::nullopt;
    const Shape& shape = s.g.type(s.tensors[v]).shape;
    int64_t axis = t.args[1]->value;
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size())) return std::nullopt;
    return AxiomParam{shape[static_cast<size_t>(axis)]};
  }
  return std::nullopt;
}

// Evaluates a constraint such as (!= ?a ?b) or (and (= ?s 1) (not (= ?p same))). Unbound
// variables make a comparison false: the match cannot be checked, so it is refused.
bool holds(const Term& c, const Scope& s) {
  if (c.kind != Term::Kind::App) return false;
  const std::string& h = c.name;
  if (h == "and" || h == "or") {
    bool any = false, all = true;
    for (auto& a : c.args) {
      bool v = holds(*a, s);
      any = any || v;
      all = all && v;
    }
    return h == "and" ? all : any;
  }
  if (h == "not") return c.args.size() == 1 && !holds(*c.args[0], s);
  if (c.args.size() != 2) return false;
  auto a = operand(*c.args[0], s), b = operand(*c.args[1], s);
  if (!a || !b) return false;
  if (h == "=") return *a == *b;
  if (h == "!=") return *a != *b;
  auto* x = std::get_if<int64_t>(&*a);
  auto* y = std::get_if<int64_t>(&*b);
  if (!x || !y) return false;
  if (h == "<") return *x < *y;
  if (h == "<=") return *x <= *y;
  if (h == ">") return *x > *y;
  if (h == ">=") return *x >= *y;
  return false;
}

}  // namespace

namespace {

void count_vars(const Term& t, std::map<std::string, int>& n) {
  if (t.kind == Term::Kind::Var) ++n[t.name];
  for (auto& a : t.args) count_vars(*a, n);
}

// The term's text with the variables in `own` renamed by order of first occurrence.
std::string renamed(const TermPtr& t, const std::set<std::string>& own) {
  std::map<std::string, std::string> names;
  auto go = [&](auto&& self, const TermPtr& u) -> TermPtr {
    if (u->kind == Term::Kind::Var && own.count(u->name)) {
      auto it = names.emplace(u->name, fmt::format("_{}", names.size())).first;
      return Term::var(it->second);
    }
    if (u->kind != Term::Kind::App) return u;
    std::vector<TermPtr> args;
    for (auto& a : u->args) args.push_back(self(self, a));
    return Term::app(u->name, std::move(args));
  };
  return rules::term_str(go(go, t));
}

// True when source outputs a and b differ only in variables each uses alone.
bool interchangeable(const TermPtr& a, const TermPtr& b) {
  std::map<std::string, int> in_a, in_b;
  count_vars(*a, in_a);
  count_vars(*b, in_b);
  std::set<std::string> own_a, own_b;
  for (auto& [v, n] : in_a)
    if (!in_b.count(v)) own_a.insert(v);
  for (auto& [v, n] : in_b)
    if (!in_a.count(v)) own_b.insert(v);
  return renamed(a, own_a) == renamed(b, own_b);
}

}  // namespace

Pattern::Pattern(const rules::Rule& rule) : rule_name_(rule.name), constraints_(rule.constraints) {
  std::vector<std::string> keys;  // canonical text per pattern node
  for (auto& p : rule.param_vars) param_vars_.push_back(p.name);
  for (auto& t : rule.source) {
    if (t->kind != Term::Kind::App)
      throw Error(fmt::format("rule '{}': a source output must apply an operator, got {}",
                              rule.name, rules::term_str(t)));
    roots_.push_back(compile(t, keys));
  }
  for (auto& n : nodes_)
    if (!n.is_var) ops_.set(op_number(n.op));
  for (int r : roots_) {
    const PatternNode& pn = nodes_[static_cast<size_t>(r)];
    std::vector<std::optional<NodeTest>> args;
    for (int a : pn.inputs) {
      const PatternNode& an = nodes_[static_cast<size_t>(a)];
      args.push_back(an.is_var ? std::nullopt : std::optional<NodeTest>(node_test(an)));
    }
    root_filters_.push_back(make_root_filter(node_test(pn), std::move(args)));
  }
  // Conditions might tell mirrored matches apart; only unconditional rules are reduced.
  interchangeable_.assign(rule.source.size(), 0);
  for (size_t i = 1; i < rule.source.size() && rule.constraints.empty(); ++i)
    interchangeable_[i] = interchangeable(rule.source[i - 1], rule.source[i]);
}

int Pattern::compile(const TermPtr& t, std::vector<std::string>& keys) {
  std::string key = rules::term_str(t);
  auto it = std::find(keys.begin(), keys.end(), key);
  if (it != keys.end()) return static_cast<int>(it - keys.begin());
  PatternNode n;
  if (t->kind == Term::Kind::Var) {
    n.is_var = true;
    n.var = index_of(tensor_vars_, t->name);
  } else if (t->kind == Term::Kind::App) {
    const rules::AxiomOp* op = rules::find_axiom_op(t->name);
    if (!op) throw Error(fmt::format("rule '{}': unknown operator '{}'", rule_name_, t->name));
    if (t->args.size() < op->num_params())
      throw Error(
          fmt::format("rule '{}': {} needs {} parameters", rule_name_, t->name, op->num_params()));
    n.op = op->op;
    n.output = op->output;
    for (size_t i = 0; i < op->num_params(); ++i) {
      const Term& a = *t->args[i];
      if (a.kind == Term::Kind::Var) {
        n.param_var.push_back(index_of(param_vars_, a.name));
        n.literal.push_back(AxiomParam{int64_t{0}});
      } else {
        n.param_var.push_back(-1);
        n.literal.push_back(rules::param_value(a));
      }
    }
    for (size_t i = op->num_params(); i < t->args.size(); ++i)
      n.inputs.push_back(compile(t->args[i], keys));
  } else {
    throw Error(fmt::format("rule '{}': {} is not a tensor term", rule_name_, rules::term_str(t)));
  }
  nodes_.push_back(std::move(n));
  keys.push_back(key);
  return static_cast<int>(nodes_.size() - 1);
}

bool Pattern::possible(const GraphIndex& ix) const {
  return (ops_ & ~ix.op_set()).none();
}

NodeTest Pattern::node_test(const PatternNode& pn) const {
  NodeTest t{pn.op,
             pn.output,
             static_cast<uint32_t>(pn.inputs.size()),
             static_cast<uint32_t>(pn.literal.size()),
             {}};
  for (size_t i = 0; i < pn.literal.size(); ++i)
    if (pn.param_var[i] < 0) t.literals.push_back({static_cast<uint32_t>(i), pn.literal[i]});
  return t;
}

bool Pattern::node_fits(const PatternNode& pn, TensorRef t, const GraphIndex& ix) const {
  const Node& n = ix.graph().node(t.node);
  if (n.op != pn.op || t.output != pn.output || n.inputs.size() != pn.inputs.size()) return false;
  if (!pn.op->attrs_to_params) return pn.literal.empty();
  const auto& vals = ix.params(t.node);  // nullopt: the node lies outside the language
  if (!vals || vals->size() != pn.literal.size()) return false;
  for (size_t i = 0; i < vals->size(); ++i)
    if (pn.param_var[i] < 0 && (*vals)[i] != pn.literal[i]) return false;
  return true;
}

bool Pattern::could_bind(int p, TensorRef t, const GraphIndex& ix) const {
  const PatternNode& pn = nodes_[static_cast<size_t>(p)];
  if (pn.is_var) return true;
  if (!node_fits(pn, t, ix)) return false;
  const Node& n = ix.graph().node(t.node);
  for (size_t i = 0; i < pn.inputs.size(); ++i)
    if (!could_bind(pn.inputs[i], n.inputs[i], ix)) return false;
  return true;
}

bool Pattern::bind(int p, TensorRef t, State& s, const GraphIndex& ix) const {
  const Graph& g = ix.graph();
  const PatternNode& pn = nodes_[static_cast<size_t>(p)];
  if (s.assigned[static_cast<size_t>(p)]) return s.tensors[static_cast<size_t>(p)] == t;
  if (pn.is_var) {
    auto v = static_cast<size_t>(pn.var);
    if (s.var_bound[v] && s.vars[v] != t) return false;
    s.vars[v] = t;
    s.var_bound[v] = 1;
  } else {
    if (!node_fits(pn, t, ix)) return false;
    if (!pn.literal.empty()) {
      const auto& vals = ix.params(t.node);
      for (size_t i = 0; i < vals->size(); ++i) {
        int pv = pn.param_var[i];
        if (pv < 0) continue;  // a literal, checked by node_fits
        auto& slot = s.params[static_cast<size_t>(pv)];
        if (slot && *slot != (*vals)[i]) return false;
        slot = (*vals)[i];
      }
    }
  }
  s.tensors[static_cast<size_t>(p)] = t;
  s.assigned[static_cast<size_t>(p)] = 1;
  if (!pn.is_var) {
    const Node& n = g.node(t.node);
    for (size_t i = 0; i < pn.inputs.size(); ++i)
      if (!bind(pn.inputs[i], n.inputs[i], s, ix)) return false;
  }
  return true;
}

bool Pattern::complete(State& s, const GraphIndex& ix, Scratch& sc) const {
  // Small sorted vectors: this runs for every candidate match of every rule.
  std::vector<TensorRef>& outs = sc.outs;
  outs.clear();
  for (int r : roots_) outs.push_back(s.tensors[static_cast<size_t>(r)]);
  std::sort(outs.begin(), outs.end());
  if (std::adjacent_find(outs.begin(), outs.end()) != outs.end()) return false;
  const Graph& g = ix.graph();
  Scope scope{param_vars_, s.params, tensor_vars_, s.vars, s.var_bound, g};
  for (auto& c : constraints_)
    if (!holds(*c, scope)) return false;
  // Operator nodes of the match; sources (weights, constants) are shared, not replaced.
  std::vector<NodeId>& internal = sc.internal;
  internal.clear();
  for (size_t p = 0; p < nodes_.size(); ++p)
    if (!nodes_[p].is_var && !g.node(s.tensors[p].node).is_source())
      internal.push_back(s.tensors[p].node);
  std::sort(internal.begin(), internal.end());
  internal.erase(std::unique(internal.begin(), internal.end()), internal.end());
  auto is_out = [&](TensorRef t) { return std::binary_search(outs.begin(), outs.end(), t); };
  for (NodeId m : internal) {
    for (uint32_t k = 0; k < g.node(m).outputs.size(); ++k)
      if (!is_out({m, k}) && ix.is_graph_output({m, k})) return false;
    // A reader outside the match may only read mapped outputs.
    for (NodeId u : ix.consumers(m)) {
      if (std::binary_search(internal.begin(), internal.end(), u)) continue;
      for (TensorRef r : g.node(u).inputs)
        if (r.node == m && !is_out(r)) return false;
    }
  }
  return true;
}

void Pattern::root_candidates(size_t root, const State& s, const GraphIndex& ix, Scratch& sc,
                              std::vector<TensorRef>& cands) const {
  const Graph& g = ix.graph();
  cands.clear();
  // Path from the root down to a node the match has already fixed: candidates are found by
  // walking up from that tensor instead of trying every node of the root's operator.
  auto& path = sc.path;  // (pattern node, argument position below it)
  path.clear();
  int fixed = -1;
  auto find_fixed = [&](auto&& self, int p) -> bool {
    if (s.assigned[static_cast<size_t>(p)]) {
      fixed = p;
      return true;
    }
    const PatternNode& pn = nodes_[static_cast<size_t>(p)];
    if (pn.is_var) {
      if (!s.var_bound[static_cast<size_t>(pn.var)]) return false;
      fixed = p;
      return true;
    }
    for (size_t i = 0; i < pn.inputs.size(); ++i) {
      path.push_back({p, i});
      if (self(self, pn.inputs[i])) return true;
      path.pop_back();
    }
    return false;
  };
  int r = roots_[root];
  bool found = find_fixed(find_fixed, r);
  if (found && path.empty()) {
    cands.push_back(s.tensors[static_cast<size_t>(r)]);
    return;
  }
  if (!found) {  // the nodes that pass the root's filter (the others fail could_bind)
    const PatternNode& pn = nodes_[static_cast<size_t>(r)];
    for (NodeId id : ix.candidates(root_filters_[root])) cands.push_back({id, pn.output});
    return;
  }
  const PatternNode& fn = nodes_[static_cast<size_t>(fixed)];
  cands.push_back(fn.is_var && !s.assigned[static_cast<size_t>(fixed)]
                      ? s.vars[static_cast<size_t>(fn.var)]
                      : s.tensors[static_cast<size_t>(fixed)]);
  auto& next = sc.next;
  for (size_t k = path.size(); k-- > 0;) {
    const PatternNode& pn = nodes_[static_cast<size_t>(path[k].first)];
    size_t pos = path[k].second;
    next.clear();
    // A consumer of t's node whose argument `pos` is t reads t: the users of t that qualify.
    for (TensorRef t : cands)
      for (NodeId u : ix.consumers(t.node)) {
        const Node& n = g.node(u);
        if (n.op == pn.op && pos < n.inputs.size() && n.inputs[pos] == t &&
            pn.output < n.outputs.size())
          next.push_back({u, pn.output});
      }
    std::sort(next.begin(), next.end());  // ascending, each once (as a set would hold them)
    next.erase(std::unique(next.begin(), next.end()), next.end());
    cands.assign(next.begin(), next.end());
  }
}

void Pattern::extend(size_t root, Scratch& sc, const GraphIndex& ix, std::vector<Match>& out,
                     size_t& count) const {
  State& s = sc.states[root];
  if (count >= sc.limit) return;
  if (root == roots_.size()) {
    if (!complete(s, ix, sc)) return;
    if (count == out.size()) out.emplace_back();
    Match& m = out[count++];
    m.vars = s.vars;
    m.params = s.params;
    m.outputs.clear();
    for (int r : roots_) m.outputs.push_back(s.tensors[static_cast<size_t>(r)]);
    m.internal.clear();
    for (size_t p = 0; p < nodes_.size(); ++p)
      if (!nodes_[p].is_var) m.internal.push_back(s.tensors[p].node);
    std::sort(m.internal.begin(), m.internal.end());
    m.internal.erase(std::unique(m.internal.begin(), m.internal.end()), m.internal.end());
    return;
  }
  if (root == 0) {  // nothing fixed yet: the nodes that pass the root's filter
    const PatternNode& pn = nodes_[static_cast<size_t>(roots_[0])];
    for (NodeId id : ix.candidates(root_filters_[0])) {
      if (count >= sc.limit) return;
      if (!could_bind(roots_[0], {id, pn.output}, ix)) continue;  // spares copying the state
      sc.states[1] = s;
      if (bind(roots_[0], {id, pn.output}, sc.states[1], ix)) extend(1, sc, ix, out, count);
    }
    return;
  }
  // The candidates of this level stay in sc.cands[root] while deeper levels use their own.
  std::vector<TensorRef>& cands = sc.cands[root];
  root_candidates(root, s, ix, sc, cands);
  for (TensorRef t : cands) {
    if (count >= sc.limit) return;
    if (root > 0 && interchangeable_[root] &&
        !(s.tensors[static_cast<size_t>(roots_[root - 1])] < t))
      continue;
    if (!could_bind(roots_[root], t, ix)) continue;  // spares copying the state
    sc.states[root + 1] = s;
    if (bind(roots_[root], t, sc.states[root + 1], ix)) extend(root + 1, sc, ix, out, count);
  }
}

std::vector<Match> Pattern::find(const GraphIndex& ix) const {
  std::vector<Match> out;
  out.resize(find(ix, out));
  return out;
}

size_t Pattern::find(const GraphIndex& ix, std::vector<Match>& out) const {
  if (!possible(ix)) return 0;
  ScratchLease<Scratch> sc;
  if (sc->states.size() < roots_.size() + 1) sc->states.resize(roots_.size() + 1);
  if (sc->cands.size() < roots_.size() + 1) sc->cands.resize(roots_.size() + 1);
  State& s = sc->states[0];
  s.tensors.assign(nodes_.size(), TensorRef{});
  s.assigned.assign(nodes_.size(), 0);
  s.vars.assign(tensor_vars_.size(), TensorRef{});
  s.var_bound.assign(tensor_vars_.size(), 0);
  s.params.assign(param_vars_.size(), std::nullopt);
  sc->limit = match_limit(ix.graph().num_slots());
  size_t count = 0;
  extend(0, *sc, ix, out, count);
  return count;
}

}  // namespace graphsub::opt
