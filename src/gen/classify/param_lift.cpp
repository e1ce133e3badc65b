#include "gen/classify/param_lift.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "ir/hash.h"
#include "ir/parallel.h"
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

// True when the parameter term `t` holds the value `v`.
bool holds_value(const Term& t, const AxiomParam& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return t.kind == Term::Kind::Int && t.value == *i;
  return t.kind == Term::Kind::Symbol && t.name == std::get<std::string>(v);
}

uint64_t hash_str(std::string_view s) {
  return hash_bytes(s.data(), s.size());
}

// Adds to `sum` a hash of every application in `t`: its operator and its parameter arguments,
// with the value `v` of domain `d` read as the variable `var` that lifting puts there.
void add_summary(const Term& t, const std::string& d, const AxiomParam& v, uint64_t var,
                 uint64_t& sum) {
  if (t.kind != Term::Kind::App) return;
  const rules::AxiomOp* op = rules::find_axiom_op(t.name);
  size_t np = op ? op->num_params() : 0;
  uint64_t h = mix64(hash_str(t.name) + t.args.size());
  for (size_t i = 0; i < t.args.size(); ++i) {
    const Term& a = *t.args[i];
    if (i >= np) {
      add_summary(a, d, v, var, sum);
      continue;
    }
    uint64_t ah;
    if (a.kind == Term::Kind::Var)
      ah = hash_str(a.name);
    else if ((*op->params)[i] == d && holds_value(a, v))
      ah = var;
    else
      ah = a.kind == Term::Kind::Int ? mix64(static_cast<uint64_t>(a.value)) : hash_str(a.name);
    h = mix64(h ^ (ah + i));
  }
  sum += mix64(h);
}

// A summary of lift_value(e, d, v) that canonicalizing does not change (a sum over the
// applications of both sides: renaming, swapping the sides and reordering the outputs leave
// it alone), computed without building the lifted form. Sites whose lifted forms are equal
// have equal summaries, so sites whose summary too few values share cannot be in a lift and
// are not canonicalized (the expensive part).
uint64_t lift_summary(const Equality& e, const std::string& d, const AxiomParam& v) {
  uint64_t var = hash_str(std::string(kParamVarPrefix) + d);  // the name lift_value gives it
  uint64_t sum = mix64(e.lhs.size());
  for (auto& t : e.lhs) add_summary(*t, d, v, var, sum);
  for (auto& t : e.rhs) add_summary(*t, d, v, var, sum);
  return sum;
}

}  // namespace

Equality lift_value(const Equality& e, const std::string& domain, const AxiomParam& v) {
  TermPtr var = Term::var(std::string(kParamVarPrefix) + domain);
  Equality out = e;
  for (auto& t : out.lhs) t = replace_param(t, domain, v, var);
  for (auto& t : out.rhs) t = replace_param(t, domain, v, var);
  return out;
}

std::vector<Lift> find_lifts(const std::vector<const Equality*>& classes,
                             const ParamDomains& declared, int threads, Reporter& rep) {
  std::vector<Item> items;
  for (size_t i = 0; i < classes.size(); ++i) items.push_back({*classes[i], {i}, 0});
  std::vector<Lift> out;
  while (!items.empty()) {
    // The sites of one lifted form. A form lifted in two domains is reached from either (from
    // the items lifted in the first, lifting the second, and the other way round); it is a
    // lift when the sites of one domain cover all its values, and then covers the members of
    // all its sites.
    struct Group {
      Equality eq;
      std::map<std::string, std::set<std::string>> values;  // by domain
      std::set<size_t> members;
      int level = 0;
      bool complete(const ParamDomains& declared) const {
        for (auto& [d, vs] : values)
          if (vs.size() == declared.at(d).size()) return true;
        return false;
      }
    };
    // The (domain, value) sites of each item and their summaries; then the lifted forms of
    // the sites whose summary's sites cover every value of a domain (canonicalizing is the
    // expensive part: in parallel), grouped in item order, so the groups do not depend on the
    // threads.
    struct Site {
      std::string domain, value;
      AxiomParam param;
      uint64_t summary = 0;
      bool open = false;  // its summary's sites cover every value of a domain
      Equality lifted;
    };
    std::vector<std::vector<Site>> sites_of(items.size());
    parallel_for(
        items.size(), threads,
        [&](size_t i, size_t) {
          const Item& it = items[i];
          std::set<std::string> lifted_domains;
          for (auto& p : param_vars_of(it.eq.lhs)) lifted_domains.insert(param_var_domain(p));
          for (auto& p : param_vars_of(it.eq.rhs)) lifted_domains.insert(param_var_domain(p));
          // The (domain, value) pairs present.
          std::set<std::pair<std::string, std::string>> seen;
          auto visit = [&](const std::string& d, const Term& v) {
            if (v.kind == Term::Kind::Var || lifted_domains.count(d) || !declared.count(d)) return;
            AxiomParam val = rules::param_value(v);
            std::string str = rules::param_str(val);
            if (seen.insert({d, str}).second)
              sites_of[i].push_back({d, std::move(str), val, lift_summary(it.eq, d, val)});
          };
          for (auto& t : it.eq.lhs) for_each_param(*t, visit);
          for (auto& t : it.eq.rhs) for_each_param(*t, visit);
        },
        [&](size_t done) {
          rep.progress("lift parameters", static_cast<double>(done),
                       static_cast<double>(items.size()));
        });
    // Sites with equal lifted forms have equal summaries: a group can only be complete where
    // its summary's sites are.
    // (Sorted runs rather than a map of sets: hundreds of thousands of sites.)
    std::vector<Site*> by_summary;
    for (auto& sites : sites_of)
      for (Site& site : sites) by_summary.push_back(&site);
    std::sort(by_summary.begin(), by_summary.end(), [](const Site* a, const Site* b) {
      return std::tie(a->summary, a->domain, a->value) < std::tie(b->summary, b->domain, b->value);
    });
    for (size_t b = 0, e = 0; b < by_summary.size(); b = e) {
      bool complete = false;
      for (e = b; e < by_summary.size() && by_summary[e]->summary == by_summary[b]->summary;) {
        size_t d = e, values = 0;
        for (; e < by_summary.size() && by_summary[e]->summary == by_summary[d]->summary &&
               by_summary[e]->domain == by_summary[d]->domain;
             ++e)
          values += e == d || by_summary[e]->value != by_summary[e - 1]->value;
        complete = complete || values == declared.at(by_summary[d]->domain).size();
      }
      for (size_t k = b; k < e; ++k) by_summary[k]->open = complete;
    }
    parallel_for(
        items.size(), threads,
        [&](size_t i, size_t) {
          for (Site& site : sites_of[i])
            if (site.open) {
              site.lifted = lift_value(items[i].eq, site.domain, site.param);
              canonicalize(site.lifted);
            }
        },
        [&](size_t done) {
          rep.progress("lift parameters", static_cast<double>(done),
                       static_cast<double>(items.size()));
        });
    std::map<std::string, Group> groups;
    for (size_t i = 0; i < items.size(); ++i)
      for (Site& site : sites_of[i]) {
        if (!site.open) continue;
        Group& g = groups[site.lifted.key];
        g.eq = std::move(site.lifted);
        g.values[site.domain].insert(site.value);
        g.members.insert(items[i].members.begin(), items[i].members.end());
        g.level = items[i].level + 1;
      }
    std::vector<Item> next;
    for (auto& [key, g] : groups) {
      if (!g.complete(declared)) continue;  // some value has no class: no lift
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
