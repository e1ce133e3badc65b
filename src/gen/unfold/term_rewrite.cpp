#include "gen/unfold/term_rewrite.h"

#include <fmt/format.h>

#include <set>

#include "core/error.h"
#include "rules/orientations.h"

namespace graphsub::gen {
namespace {

using rules::Term;
using rules::TermPtr;

void collect_vars(const TermPtr& t, std::set<std::string>& out) {
  if (t->kind == Term::Kind::Var) out.insert(t->name);
  for (auto& a : t->args) collect_vars(a, out);
}

bool match_into(const TermPtr& p, const TermPtr& t, Bindings& b) {
  if (p->kind == Term::Kind::Var) {
    auto [it, fresh] = b.emplace(p->name, t);
    return fresh || rules::term_equal(it->second, t);
  }
  if (p->kind != t->kind || p->name != t->name || p->args.size() != t->args.size()) return false;
  if (p->kind == Term::Kind::Int) return p->value == t->value;
  for (size_t i = 0; i < p->args.size(); ++i)
    if (!match_into(p->args[i], t->args[i], b)) return false;
  return true;
}

// Appends, for each position of `t` in pre-order where `r` matches, `t` with that subterm
// rewritten (the rewritten subterm put back into copies of its parents).
void rewrite_at_each(const TermPtr& t, const TermRewrite& r, std::vector<TermPtr>& out) {
  if (auto b = match_term(r.from, t)) out.push_back(substitute(r.to, *b));
  for (size_t i = 0; i < t->args.size(); ++i) {
    std::vector<TermPtr> inner;
    rewrite_at_each(t->args[i], r, inner);
    for (auto& replaced : inner) {
      std::vector<TermPtr> args = t->args;
      args[i] = replaced;
      out.push_back(Term::app(t->name, std::move(args)));
    }
  }
}

}  // namespace

TermRewrite term_rewrite(const rules::RuleSet& axioms, const std::string& name) {
  const bool reverse = name.ends_with(rules::kReverseSuffix);
  const std::string base =
      reverse ? name.substr(0, name.size() - rules::kReverseSuffix.size()) : name;
  for (const rules::Rule& a : axioms.axioms) {
    if (a.name != base) continue;
    if (!a.constraints.empty())
      throw Error(fmt::format("axiom {} has conditions: a term rewrite cannot check them", base));
    TermRewrite r{name, reverse ? a.target.at(0) : a.source.at(0),
                  reverse ? a.source.at(0) : a.target.at(0)};
    std::set<std::string> bound, used;
    collect_vars(r.from, bound);
    collect_vars(r.to, used);
    for (const std::string& v : used)
      if (!bound.count(v))
        throw Error(fmt::format(
            "axiom {} read this way uses ?{}, which its left side does not bind", name, v));
    if (r.from->kind != Term::Kind::App)
      throw Error(fmt::format("axiom {} read this way rewrites a bare variable", name));
    return r;
  }
  throw Error(fmt::format("no axiom named {}", base));
}

std::optional<Bindings> match_term(const TermPtr& pattern, const TermPtr& t) {
  Bindings b;
  if (!match_into(pattern, t, b)) return std::nullopt;
  return b;
}

TermPtr substitute(const TermPtr& t, const Bindings& b) {
  if (t->kind == Term::Kind::Var) {
    auto it = b.find(t->name);
    return it == b.end() ? t : it->second;
  }
  if (t->kind != Term::Kind::App) return t;
  std::vector<TermPtr> args;
  args.reserve(t->args.size());
  for (auto& a : t->args) args.push_back(substitute(a, b));
  return Term::app(t->name, std::move(args));
}

std::vector<TermPtr> rewrites_once(const TermPtr& t, const TermRewrite& r) {
  std::vector<TermPtr> out;
  rewrite_at_each(t, r, out);
  return out;
}

std::vector<TermPtr> rewrites_at_first_match(const TermPtr& t,
                                             const std::vector<TermRewrite>& rewrites) {
  if (t->kind != Term::Kind::App) return {};
  std::vector<TermPtr> here;
  for (const TermRewrite& d : rewrites)
    if (auto b = match_term(d.from, t)) here.push_back(substitute(d.to, *b));
  if (!here.empty()) return here;
  for (size_t i = 0; i < t->args.size(); ++i) {
    std::vector<TermPtr> inner = rewrites_at_first_match(t->args[i], rewrites);
    if (inner.empty()) continue;
    std::vector<TermPtr> out;
    for (TermPtr& r : inner) {
      std::vector<TermPtr> args = t->args;
      args[i] = std::move(r);
      out.push_back(Term::app(t->name, std::move(args)));
    }
    return out;
  }
  return {};
}

}  // namespace graphsub::gen
