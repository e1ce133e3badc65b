#include "gen/common_subgraph.h"

#include <map>
#include <set>

namespace graphsub::gen {

using rules::Term;
using rules::TermPtr;

namespace {

bool has_var(const Term& t) {
  if (t.kind == Term::Kind::Var) return true;
  for (auto& a : t.args)
    if (has_var(*a)) return true;
  return false;
}

void app_subterms(const TermPtr& t, std::map<std::string, TermPtr>& out) {
  if (t->kind != Term::Kind::App) return;
  out.emplace(rules::term_str(t), t);
  for (auto& a : t->args) app_subterms(a, out);
}

TermPtr replace(const TermPtr& t, const std::string& what, const TermPtr& with) {
  if (t->kind != Term::Kind::App) return t;
  if (rules::term_str(t) == what) return with;
  std::vector<TermPtr> args;
  bool changed = false;
  for (auto& a : t->args) {
    args.push_back(replace(a, what, with));
    changed = changed || args.back() != a;
  }
  return changed ? Term::app(t->name, std::move(args)) : t;
}

bool contains(const TermPtr& t, const std::string& what) {
  if (rules::term_str(t) == what) return true;
  for (auto& a : t->args)
    if (a->kind == Term::Kind::App && contains(a, what)) return true;
  return false;
}

// Drops output pairs whose sides are the same term.
Equality without_trivial_pairs(const Equality& e) {
  Equality r;
  for (size_t i = 0; i < e.lhs.size(); ++i) {
    if (rules::term_equal(e.lhs[i], e.rhs[i])) continue;
    r.lhs.push_back(e.lhs[i]);
    r.rhs.push_back(e.rhs[i]);
  }
  r.lhs_ops = count_ops(r.lhs);
  r.rhs_ops = count_ops(r.rhs);
  return r;
}

}  // namespace

std::vector<Equality> input_generalizations(const Equality& e) {
  std::map<std::string, TermPtr> left, right;
  for (auto& t : e.lhs) app_subterms(t, left);
  for (auto& t : e.rhs) app_subterms(t, right);
  std::vector<std::pair<std::string, TermPtr>> common;
  for (auto& [k, t] : left)
    if (right.count(k) && has_var(*t)) common.emplace_back(k, t);
  std::vector<Equality> out;
  std::set<std::string> vars;
  for (auto& v : variables_of(e.lhs)) vars.insert(v);
  for (auto& v : variables_of(e.rhs)) vars.insert(v);
  std::string fresh = "g";
  while (vars.count(fresh)) fresh += "g";
  for (auto& [k, t] : common) {
    bool maximal = true;
    for (auto& [k2, t2] : common)
      if (k2 != k && contains(t2, k)) maximal = false;
    if (!maximal) continue;
    Equality g;
    TermPtr v = Term::var(fresh);
    for (auto& x : e.lhs) g.lhs.push_back(replace(x, k, v));
    for (auto& x : e.rhs) g.rhs.push_back(replace(x, k, v));
    g = without_trivial_pairs(g);
    if (g.lhs.empty()) continue;
    out.push_back(std::move(g));
  }
  return out;
}

std::optional<Equality> output_generalization(const Equality& e) {
  Equality g;
  bool any_top = false;
  for (size_t i = 0; i < e.lhs.size(); ++i) {
    const TermPtr& a = e.lhs[i];
    const TermPtr& b = e.rhs[i];
    if (rules::term_equal(a, b)) continue;
    if (a->kind != Term::Kind::App || b->kind != Term::Kind::App || a->name != b->name ||
        a->args.size() != b->args.size())
      return std::nullopt;
    any_top = true;
    for (size_t j = 0; j < a->args.size(); ++j) {
      if (rules::term_equal(a->args[j], b->args[j])) continue;
      // Parameters must agree: only tensor arguments may differ.
      if (a->args[j]->kind == Term::Kind::Int || a->args[j]->kind == Term::Kind::Symbol ||
          b->args[j]->kind == Term::Kind::Int || b->args[j]->kind == Term::Kind::Symbol)
        return std::nullopt;
      g.lhs.push_back(a->args[j]);
      g.rhs.push_back(b->args[j]);
    }
  }
  if (!any_top) return std::nullopt;
  g = without_trivial_pairs(g);
  if (g.lhs.empty()) return std::nullopt;
  return g;
}

}  // namespace graphsub::gen
