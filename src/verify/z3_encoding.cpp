#include "verify/z3_encoding.h"

#include <fmt/format.h>

#include <functional>
#include <set>

#include "core/error.h"
#include "rules/axiom_ops.h"

namespace graphsub::verify {

using rules::Term;
using rules::TermPtr;

namespace {
// Symbols get codes far from any integer parameter value, so the two never meet.
constexpr int64_t kSymbolBase = 1000;
}  // namespace

Z3Encoding::Z3Encoding(z3::context& ctx, const rules::RuleSet& domains)
    : ctx_(ctx),
      domains_(domains),
      tensor_(ctx.uninterpreted_sort("Tensor")),
      dim_(ctx.function("dim", tensor_, ctx.int_sort(), ctx.int_sort())) {
  for (auto& d : domains.domains)
    for (auto& v : d.values)
      if (v->kind == Term::Kind::Symbol && !symbol_codes_.count(v->name))
        symbol_codes_.emplace(v->name, kSymbolBase + static_cast<int64_t>(symbol_codes_.size()));
}

int64_t Z3Encoding::encode(const Term& p) const {
  if (p.kind == Term::Kind::Int) return p.value;
  if (p.kind == Term::Kind::Symbol) {
    auto it = symbol_codes_.find(p.name);
    if (it == symbol_codes_.end())
      throw Error(fmt::format("symbol '{}' belongs to no declared domain", p.name));
    return it->second;
  }
  throw Error(
      fmt::format("'{}' is not a parameter value", rules::term_str(std::make_shared<Term>(p))));
}

z3::func_decl Z3Encoding::op_decl(const std::string& name, size_t np, size_t nt) {
  auto it = decls_.find(name);
  if (it != decls_.end()) return it->second;
  z3::sort_vector dom(ctx_);
  for (size_t i = 0; i < np; ++i) dom.push_back(ctx_.int_sort());
  for (size_t i = 0; i < nt; ++i) dom.push_back(tensor_);
  z3::func_decl f = z3::function(name.c_str(), dom, tensor_);
  decls_.emplace(name, f);
  return f;
}

Z3Encoding::Vars Z3Encoding::declare(const rules::Rule& r, const std::string& prefix) {
  Vars v;
  for (auto& t : r.tensor_vars) v.tensors.emplace(t, ctx_.constant((prefix + t).c_str(), tensor_));
  for (auto& p : r.param_vars) v.params.emplace(p.name, ctx_.int_const((prefix + p.name).c_str()));
  return v;
}

z3::expr Z3Encoding::term(const TermPtr& t, const Vars& v) {
  switch (t->kind) {
    case Term::Kind::Var: {
      auto it = v.tensors.find(t->name);
      if (it != v.tensors.end()) return it->second;
      auto jt = v.params.find(t->name);
      if (jt != v.params.end()) return jt->second;
      throw Error(fmt::format("variable ?{} is not declared", t->name));
    }
    case Term::Kind::Int:
    case Term::Kind::Symbol:
      return ctx_.int_val(encode(*t));
    case Term::Kind::App:
      break;
  }
  const rules::AxiomOp* op = rules::find_axiom_op(t->name);
  if (!op) throw Error(fmt::format("unknown operator '{}'", t->name));
  z3::expr_vector args(ctx_);
  for (auto& a : t->args) args.push_back(term(a, v));
  z3::func_decl f = op_decl(t->name, op->num_params(), op->num_tensors);
  return f(args);
}

z3::expr Z3Encoding::condition(const TermPtr& c, const Vars& v) {
  const std::string& h = c->name;
  if (h == "and" || h == "or") {
    z3::expr_vector xs(ctx_);
    for (auto& a : c->args) xs.push_back(condition(a, v));
    if (xs.empty()) return ctx_.bool_val(h == "and");
    return h == "and" ? z3::mk_and(xs) : z3::mk_or(xs);
  }
  if (h == "not") return !condition(c->args[0], v);
  auto value = [&](const TermPtr& a) -> z3::expr {
    if (a->kind == Term::Kind::App && a->name == "dim")
      return dim_(term(a->args[0], v), ctx_.int_val(a->args[1]->value));
    return term(a, v);
  };
  z3::expr x = value(c->args[0]), y = value(c->args[1]);
  if (h == "=") return x == y;
  if (h == "!=") return x != y;
  if (h == "<") return x < y;
  if (h == "<=") return x <= y;
  if (h == ">") return x > y;
  if (h == ">=") return x >= y;
  throw Error(fmt::format("unknown condition '{}'", h));
}

z3::expr Z3Encoding::in_domain(const z3::expr& p, const std::string& domain) {
  const rules::ParamDomain* d = domains_.domain(domain);
  if (!d) throw Error(fmt::format("domain '{}' is not declared", domain));
  z3::expr_vector xs(ctx_);
  for (auto& val : d->values) xs.push_back(p == ctx_.int_val(encode(*val)));
  return z3::mk_or(xs);
}

z3::expr Z3Encoding::guard(const rules::Rule& r, const Vars& v) {
  z3::expr_vector xs(ctx_);
  for (auto& p : r.param_vars) xs.push_back(in_domain(v.params.at(p.name), p.domain));
  for (auto& c : r.constraints) xs.push_back(condition(c, v));
  return xs.empty() ? ctx_.bool_val(true) : z3::mk_and(xs);
}

z3::expr Z3Encoding::well_typed(const rules::Rule& r, const Vars& v) {
  constexpr int kMaxRank = 4;  // the language's tensors have rank 0, 2 or 4
  z3::expr_vector xs(ctx_);
  bool has_concat = false;
  std::function<void(const TermPtr&)> visit = [&](const TermPtr& t) {
    if (t->kind != Term::Kind::App) return;
    for (auto& a : t->args) visit(a);
    bool elementwise = t->name == "ewadd" || t->name == "ewmul";
    if (!elementwise && t->name != "concat") return;
    has_concat = has_concat || !elementwise;
    size_t first = elementwise ? 0 : 1;  // concat's axis comes first
    z3::expr x = term(t->args[first], v), y = term(t->args[first + 1], v), whole = term(t, v);
    for (int k = 0; k < kMaxRank; ++k) {
      z3::expr axis = ctx_.int_val(k);
      z3::expr same = dim_(x, axis) == dim_(y, axis);
      if (elementwise) {
        xs.push_back(same);
        xs.push_back(dim_(whole, axis) == dim_(x, axis));
        continue;
      }
      z3::expr along = term(t->args[0], v) == axis;
      xs.push_back(z3::implies(!along, same));
      xs.push_back(dim_(whole, axis) ==
                   z3::ite(along, dim_(x, axis) + dim_(y, axis), dim_(x, axis)));
    }
  };
  for (auto* side : {&r.source, &r.target})
    for (auto& t : *side) visit(t);
  // Only the concat axioms' conditions need these facts; without a concat in the rule they
  // would only slow the solver (a chain of 22 ewadds went from milliseconds past a minute).
  if (!has_concat || xs.empty()) return ctx_.bool_val(true);
  return z3::mk_and(xs);
}

z3::expr Z3Encoding::axiom(const rules::Rule& a) {
  Vars v = declare(a, "ax!" + a.name + "!");
  std::vector<Z3_app> bound;
  for (auto& t : a.tensor_vars) bound.push_back(Z3_to_app(ctx_, v.tensors.at(t)));
  for (auto& p : a.param_vars) bound.push_back(Z3_to_app(ctx_, v.params.at(p.name)));
  z3::expr lhs = term(a.source[0], v), rhs = term(a.target[0], v);
  z3::expr body = z3::implies(guard(a, v), lhs == rhs);
  if (bound.empty()) return body;

  // E-matching patterns: each side that applies an operator and mentions every variable;
  // otherwise both sides together as one multi-pattern.
  auto vars_of = [](const TermPtr& t) {
    std::set<std::string> s;
    std::vector<const Term*> st{t.get()};
    while (!st.empty()) {
      const Term* x = st.back();
      st.pop_back();
      if (x->kind == Term::Kind::Var) s.insert(x->name);
      for (auto& y : x->args) st.push_back(y.get());
    }
    return s;
  };
  size_t nvars = a.tensor_vars.size() + a.param_vars.size();
  std::vector<Z3_pattern> patterns;
  // The C API hands out patterns without a reference; hold one while they are in use.
  auto add_pattern = [&](std::vector<Z3_ast> terms) {
    Z3_pattern pat = Z3_mk_pattern(ctx_, static_cast<unsigned>(terms.size()), terms.data());
    ctx_.check_error();
    Z3_inc_ref(ctx_, Z3_pattern_to_ast(ctx_, pat));
    patterns.push_back(pat);
  };
  for (auto [t, e] : {std::pair{a.source[0], lhs}, std::pair{a.target[0], rhs}})
    if (t->kind == Term::Kind::App && vars_of(t).size() == nvars) add_pattern({e});
  if (patterns.empty() && a.source[0]->kind == Term::Kind::App &&
      a.target[0]->kind == Term::Kind::App)
    add_pattern({lhs, rhs});
  if (patterns.empty())
    throw Error(fmt::format("axiom {}: no side can serve as a pattern for its variables", a.name));
  Z3_ast q = Z3_mk_forall_const(ctx_, 0, static_cast<unsigned>(bound.size()), bound.data(),
                                static_cast<unsigned>(patterns.size()), patterns.data(), body);
  z3::expr result(ctx_, q);
  for (Z3_pattern pat : patterns) Z3_dec_ref(ctx_, Z3_pattern_to_ast(ctx_, pat));
  ctx_.check_error();
  return result;
}

}  // namespace graphsub::verify
