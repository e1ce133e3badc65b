#include "gen/classify/equality.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "core/error.h"
#include "rules/axiom_ops.h"
#include "rules/rule_parser.h"

namespace graphsub::gen {

using rules::Term;
using rules::TermPtr;

TermPtr side_term(const Space& s, const CompactGraph& g, TensorId t) {
  size_t p = s.num_pool();
  if (is_pool_id(p, t)) return Term::var(s.pool[t].name);
  int k = producer_of(p, t), o = output_index_of(p, t);
  const GraphOp& gop = g.ops[static_cast<size_t>(k)];
  const GenOp& op = s.variants[gop.variant];
  std::vector<TermPtr> args;
  for (auto& v : op.params) args.push_back(rules::param_term(v));
  for (int i = 0; i < op.arity; ++i)
    args.push_back(side_term(s, g, gop.in[static_cast<size_t>(i)]));
  std::string name = op.name;
  if (op.num_outputs > 1)
    name = static_cast<size_t>(o) < op.def->axiom_outputs.size()
               ? op.def->axiom_outputs[static_cast<size_t>(o)]
               : fmt::format("{}{}", op.name, o);
  return Term::app(std::move(name), std::move(args));
}

bool is_param_var(const std::string& name) {
  return name.rfind(kParamVarPrefix, 0) == 0;
}

std::string param_var_domain(const std::string& name) {
  return name.substr(std::string(kParamVarPrefix).size());
}

uint64_t lifted_count(const std::vector<Equality>& rules) {
  return static_cast<uint64_t>(std::count_if(rules.begin(), rules.end(), [](const Equality& e) {
    return !param_vars_of(e.lhs).empty() || !param_vars_of(e.rhs).empty();
  }));
}

std::vector<std::string> param_vars_of(const std::vector<TermPtr>& terms) {
  std::set<std::string> seen;
  std::function<void(const Term&)> walk = [&](const Term& t) {
    if (t.kind == Term::Kind::Var && is_param_var(t.name)) seen.insert(t.name);
    for (auto& a : t.args) walk(*a);
  };
  for (auto& t : terms) walk(*t);
  return {seen.begin(), seen.end()};
}

Equality equality_of(const Space& s, const Candidate& c) {
  Equality e;
  for (TensorId t : c.a_out) e.lhs.push_back(side_term(s, c.a.g, t));
  for (TensorId t : c.b_out) e.rhs.push_back(side_term(s, c.b.g, t));
  e.lhs_ops = c.a.g.num_ops;
  e.rhs_ops = c.b.g.num_ops;
  return e;
}

namespace {

// Prints a term renaming variables on first occurrence (or erasing them).
struct Renamer {
  std::map<std::string, std::string> names;
  bool erase = false;

  static std::string nth_name(size_t i) {
    std::string n(1, static_cast<char>('a' + i % 26));
    if (i >= 26) n += std::to_string(i / 26);
    return n;
  }
  void print(const Term& t, std::string& out) {
    switch (t.kind) {
      case Term::Kind::Var: {
        if (is_param_var(t.name)) {  // parameter variables keep their names
          out += "?" + t.name;
          return;
        }
        if (erase) {
          out += "?_";
          return;
        }
        auto it = names.find(t.name);
        if (it == names.end()) it = names.emplace(t.name, nth_name(names.size())).first;
        out += "?" + it->second;
        return;
      }
      case Term::Kind::Int:
        out += std::to_string(t.value);
        return;
      case Term::Kind::Symbol:
        out += t.name;
        return;
      case Term::Kind::App:
        out += "(" + t.name;
        for (auto& a : t.args) {
          out += " ";
          print(*a, out);
        }
        out += ")";
        return;
    }
  }
  TermPtr rename(const TermPtr& t) {
    switch (t->kind) {
      case Term::Kind::Var:
        return is_param_var(t->name) ? t : Term::var(names.at(t->name));
      case Term::Kind::App: {
        std::vector<TermPtr> args;
        for (auto& a : t->args) args.push_back(rename(a));
        return Term::app(t->name, std::move(args));
      }
      default:
        return t;
    }
  }
};

struct Arrangement {
  bool swap = false;
  std::vector<size_t> perm;
};

std::string render(const Equality& e, const Arrangement& a, bool erase, Renamer* keep = nullptr) {
  Renamer r;
  r.erase = erase;
  const auto& L = a.swap ? e.rhs : e.lhs;
  const auto& R = a.swap ? e.lhs : e.rhs;
  std::string out;
  for (size_t i : a.perm) {
    r.print(*L[i], out);
    out += " ";
  }
  out += "=";
  for (size_t i : a.perm) {
    out += " ";
    r.print(*R[i], out);
  }
  if (keep) *keep = std::move(r);
  return out;
}

// Every orientation and output order (output orders beyond 5 outputs: only sorted by their
// erased text, which is canonical enough and bounded).
std::vector<Arrangement> arrangements(const Equality& e) {
  size_t n = e.lhs.size();
  std::vector<Arrangement> out;
  for (int sw = 0; sw < 2; ++sw) {
    std::vector<size_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    if (n > 5) {
      const auto& L = sw ? e.rhs : e.lhs;
      std::vector<std::string> txt(n);
      for (size_t i = 0; i < n; ++i) {
        Renamer r;
        r.erase = true;
        r.print(*L[i], txt[i]);
      }
      std::stable_sort(perm.begin(), perm.end(),
                       [&](size_t a, size_t b) { return txt[a] < txt[b]; });
      out.push_back({sw == 1, perm});
      continue;
    }
    do out.push_back({sw == 1, perm});
    while (std::next_permutation(perm.begin(), perm.end()));
  }
  return out;
}

bool match(const Term& g, const Term& s, std::map<std::string, std::string>& sigma) {
  if (g.kind == Term::Kind::Var && is_param_var(g.name))
    return s.kind == Term::Kind::Var && s.name == g.name;
  if (g.kind == Term::Kind::Var) {
    if (s.kind != Term::Kind::Var) return false;
    auto [it, fresh] = sigma.emplace(g.name, s.name);
    return fresh || it->second == s.name;
  }
  if (g.kind != s.kind || g.name != s.name || g.value != s.value || g.args.size() != s.args.size())
    return false;
  for (size_t i = 0; i < g.args.size(); ++i)
    if (!match(*g.args[i], *s.args[i], sigma)) return false;
  return true;
}

void collect_vars(const Term& t, std::vector<std::string>& out, std::set<std::string>& seen) {
  if (t.kind == Term::Kind::Var) {
    if (!is_param_var(t.name) && seen.insert(t.name).second) out.push_back(t.name);
    return;
  }
  for (auto& a : t.args) collect_vars(*a, out, seen);
}

void collect_apps(const TermPtr& t, std::set<std::string>& seen) {
  if (t->kind != Term::Kind::App) return;
  std::string key = rules::term_str(t);
  // split0/split1 of one tensor are one operator in the graph.
  if (t->name == "split0" || t->name == "split1") key = "split" + key.substr(7);
  seen.insert(key);
  for (auto& a : t->args) collect_apps(a, seen);
}

}  // namespace

void canonicalize(Equality& e, std::vector<TermPtr>* also) {
  std::string best, best_skel;
  Arrangement best_a;
  bool first = true;
  for (const Arrangement& a : arrangements(e)) {
    std::string skel = render(e, a, true);
    if (first || skel < best_skel) best_skel = skel;
    std::string txt = render(e, a, false);
    if (first || txt < best) {
      best = txt;
      best_a = a;
    }
    first = false;
  }
  Renamer r;
  render(e, best_a, false, &r);
  Equality c;
  const auto& L = best_a.swap ? e.rhs : e.lhs;
  const auto& R = best_a.swap ? e.lhs : e.rhs;
  for (size_t i : best_a.perm) {
    c.lhs.push_back(r.rename(L[i]));
    c.rhs.push_back(r.rename(R[i]));
  }
  c.lhs_ops = best_a.swap ? e.rhs_ops : e.lhs_ops;
  c.rhs_ops = best_a.swap ? e.lhs_ops : e.rhs_ops;
  std::vector<TermPtr> conds;
  for (auto& t : e.conditions) conds.push_back(r.rename(t));
  c.conditions = common_conditions(conds, conds);  // sorted, without repeats
  c.key = best;
  c.skeleton = best_skel;
  if (!c.conditions.empty()) {
    std::string where = " where";
    for (auto& t : c.conditions) where += " " + rules::term_str(t);
    c.key += where;
    c.skeleton += where;
  }
  if (also)
    for (auto& t : *also) t = r.rename(t);
  e = std::move(c);
}

Equality equality_from_key(const std::string& key, bool check) {
  size_t eq = key.find(" = ");
  if (eq == std::string::npos) throw Error(fmt::format("not the key of an equality: '{}'", key));
  size_t where = key.find(" where ", eq);
  std::string_view sides(key);
  Equality e;
  std::string_view conditions;
  if (where != std::string::npos) {
    conditions = sides.substr(where + 7);
    sides = sides.substr(0, where);
  }
  e.lhs = rules::parse_terms(sides.substr(0, eq));
  e.rhs = rules::parse_terms(sides.substr(eq + 3));
  if (!conditions.empty()) {
    std::vector<TermPtr> all = e.lhs;
    all.insert(all.end(), e.rhs.begin(), e.rhs.end());
    e.conditions = rules::parse_conditions(conditions, variables_of(all));
  }
  e.lhs_ops = count_ops(e.lhs);
  e.rhs_ops = count_ops(e.rhs);
  if (!check) {
    e.key = key;
    return e;
  }
  canonicalize(e);  // already canonical: sets key (the same text) and skeleton
  if (e.key != key) throw Error(fmt::format("not a canonical key: '{}'", key));
  return e;
}

std::vector<TermPtr> common_conditions(const std::vector<TermPtr>& a,
                                       const std::vector<TermPtr>& b) {
  std::map<std::string, TermPtr> in_a, out;
  for (auto& t : a) in_a.emplace(rules::term_str(t), t);
  for (auto& t : b) {
    std::string k = rules::term_str(t);
    if (in_a.count(k)) out.emplace(k, t);
  }
  std::vector<TermPtr> v;
  for (auto& [k, t] : out) v.push_back(t);
  return v;
}

std::vector<TermPtr> shape_conditions(const Space& s, const Candidate& c) {
  size_t p = s.num_pool();
  std::vector<TermPtr> out;
  auto dim = [](const std::string& v, int64_t axis) {
    return Term::app("dim", {Term::var(v), Term::integer(axis)});
  };
  auto scan = [&](const CompactGraph& g) {
    for (int k = 0; k < g.num_ops; ++k) {
      const GraphOp& op = g.ops[static_cast<size_t>(k)];
      const std::string& name = s.variants[op.variant].name;
      if (name != "conv" && name != "matmul") continue;
      TensorId x = op.in[0], y = op.in[1];
      if (!is_pool_id(p, x) || !is_pool_id(p, y)) continue;
      const Shape& xs = s.pool[x].shape;
      const Shape& ys = s.pool[y].shape;
      const std::string& xn = s.pool[x].name;
      const std::string& yn = s.pool[y].name;
      if (name == "conv" && xs.size() == 4 && ys.size() == 4 && xs[1] == ys[1])
        out.push_back(Term::app("=", {dim(yn, 1), dim(xn, 1)}));  // a dense conv
      if (name == "matmul" && xs.size() == 2 && ys.size() == 2)
        out.push_back(Term::app("=", {dim(xn, 1), dim(yn, 0)}));  // an aligned matmul
    }
  };
  scan(c.a.g);
  scan(c.b.g);
  return common_conditions(out, out);
}

bool is_instance(const Equality& specific, const Equality& general) {
  if (specific.lhs.size() != general.lhs.size()) return false;
  for (const Arrangement& a : arrangements(general)) {
    const auto& L = a.swap ? general.rhs : general.lhs;
    const auto& R = a.swap ? general.lhs : general.rhs;
    std::map<std::string, std::string> sigma;
    bool ok = true;
    for (size_t i = 0; ok && i < a.perm.size(); ++i)
      ok = match(*L[a.perm[i]], *specific.lhs[i], sigma) &&
           match(*R[a.perm[i]], *specific.rhs[i], sigma);
    if (ok) return true;
  }
  return false;
}

std::vector<std::string> variables_of(const std::vector<TermPtr>& terms) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (auto& t : terms) collect_vars(*t, out, seen);
  return out;
}

int count_ops(const std::vector<TermPtr>& terms) {
  std::set<std::string> seen;
  for (auto& t : terms) collect_apps(t, seen);
  return static_cast<int>(seen.size());
}

}  // namespace graphsub::gen
