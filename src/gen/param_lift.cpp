#include "gen/param_lift.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "gen/parallel.h"
#include "rules/axiom_ops.h"

namespace graphsub::gen {

using rules::Term;
using rules::TermPtr;

namespace {

// Calls f(domain, value term) for every parameter argument of every application.
void for_each_param(const Term& t, const std::function<void(const std::string&, const Term&)>& f) {
  if (t.kind != Term::Kind::App) return;
  const rules::AxiomOp* op = rules::find_axiom_op(t.name);
  size_t np = op ? op->num_params() : 0;
  for (size_t i = 0; i < t.args.size(); ++i) {
    if (i < np) {
      f((*op->params)[i], *t.args[i]);
    } else {
      for_each_param(*t.args[i], f);
    }
  }
}

TermPtr replace_param(const TermPtr& t, const std::string& domain, const AxiomParam& v,
                      const TermPtr& var) {
  if (t->kind != Term::Kind::App) return t;
  const rules::AxiomOp* op = rules::find_axiom_op(t->name);
  size_t np = op ? op->num_params() : 0;
  std::vector<TermPtr> args;
  bool changed = false;
  for (size_t i = 0; i < t->args.size(); ++i) {
    const TermPtr& a = t->args[i];
    TermPtr r = a;
    if (i < np) {
      if ((*op->params)[i] == domain && a->kind != Term::Kind::Var && rules::param_value(*a) == v)
        r = var;
    } else {
      r = replace_param(a, domain, v, var);
    }
    changed = changed || r != a;
    args.push_back(r);
  }
  return changed ? Term::app(t->name, std::move(args)) : t;
}

struct Item {
  Equality eq;
  std::vector<size_t> members;
  int level = 0;
};

}  // namespace

Equality lift_value(const Equality& e, const std::string& domain, const AxiomParam& v) {
  TermPtr var = Term::var(std::string(kParamVarPrefix) + domain);
  Equality out = e;
  for (auto& t : out.lhs) t = replace_param(t, domain, v, var);
  for (auto& t : out.rhs) t = replace_param(t, domain, v, var);
  return out;
}

std::vector<Lift> find_lifts(const std::vector<const Equality*>& classes,
                             const ParamDomains& declared, int threads) {
  std::vector<Item> items;
  for (size_t i = 0; i < classes.size(); ++i) items.push_back({*classes[i], {i}, 0});
  std::vector<Lift> out;
  while (!items.empty()) {
    struct Group {
      Equality eq;
      std::string domain;
      std::set<std::string> values;
      std::set<size_t> members;
      int level = 0;
    };
    // The lifted forms of each item (canonicalizing is the expensive part: in parallel), then
    // grouped in item order, so the groups do not depend on the threads.
    struct Site {
      Equality lifted;
      std::string domain, value;
    };
    std::vector<std::vector<Site>> sites_of(items.size());
    parallel_for(items.size(), threads, [&](size_t i, size_t) {
      const Item& it = items[i];
      std::set<std::string> lifted_domains;
      for (auto& p : param_vars_of(it.eq.lhs)) lifted_domains.insert(param_var_domain(p));
      for (auto& p : param_vars_of(it.eq.rhs)) lifted_domains.insert(param_var_domain(p));
      // The (domain, value) pairs present.
      std::set<std::pair<std::string, std::string>> seen;
      std::vector<std::pair<std::string, AxiomParam>> sites;
      auto visit = [&](const std::string& d, const Term& v) {
        if (v.kind == Term::Kind::Var || lifted_domains.count(d) || !declared.count(d)) return;
        AxiomParam val = rules::param_value(v);
        if (seen.insert({d, rules::param_str(val)}).second) sites.emplace_back(d, val);
      };
      for (auto& t : it.eq.lhs) for_each_param(*t, visit);
      for (auto& t : it.eq.rhs) for_each_param(*t, visit);
      for (auto& [d, v] : sites) {
        Equality l = lift_value(it.eq, d, v);
        canonicalize(l);
        sites_of[i].push_back({std::move(l), d, rules::param_str(v)});
      }
    });
    std::map<std::string, Group> groups;
    for (size_t i = 0; i < items.size(); ++i)
      for (Site& site : sites_of[i]) {
        Group& g = groups[site.lifted.key];
        g.eq = std::move(site.lifted);
        g.domain = site.domain;
        g.values.insert(site.value);
        g.members.insert(items[i].members.begin(), items[i].members.end());
        g.level = items[i].level + 1;
      }
    std::vector<Item> next;
    for (auto& [key, g] : groups) {
      const auto& dom = declared.at(g.domain);
      if (g.values.size() != dom.size()) continue;  // some value has no class: no lift
      Lift l{g.eq, {g.members.begin(), g.members.end()}, g.level};
      out.push_back(l);
      next.push_back({l.eq, l.members, l.level});
    }
    items = std::move(next);
  }
  std::stable_sort(out.begin(), out.end(), [](const Lift& a, const Lift& b) {
    return a.level != b.level ? a.level > b.level : a.eq.key < b.eq.key;
  });
  return out;
}

}  // namespace graphsub::gen
