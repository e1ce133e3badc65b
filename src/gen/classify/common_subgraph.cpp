#include "gen/classify/common_subgraph.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace graphsub::gen {

using rules::Term;
using rules::TermPtr;

namespace {

// Structural hashes stand in for term text when looking for shared subterms: the reduction
// runs on every large candidate, and printing every subterm costs more than the rest of it.
// Equal hashes are confirmed with term_equal before two subterms count as the same.
uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0x100000001b3ULL;
}

uint64_t text_hash(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ULL;
  return h;
}

struct Node {
  uint64_t hash = 0;
  bool has_var = false;
};

// Hashes `t`; appends every application subterm that contains a variable to `apps`.
Node walk(const TermPtr& t, std::vector<std::pair<uint64_t, TermPtr>>* apps) {
  Node n;
  n.hash = mix(static_cast<uint64_t>(t->kind) + 1, text_hash(t->name));
  n.hash = mix(n.hash, static_cast<uint64_t>(t->value));
  n.has_var = t->kind == Term::Kind::Var;
  for (auto& a : t->args) {
    Node c = walk(a, apps);
    n.hash = mix(n.hash, c.hash);
    n.has_var = n.has_var || c.has_var;
  }
  if (apps && t->kind == Term::Kind::App && n.has_var) apps->emplace_back(n.hash, t);
  return n;
}

std::vector<std::pair<uint64_t, TermPtr>> app_subterms(const std::vector<TermPtr>& side) {
  std::vector<std::pair<uint64_t, TermPtr>> out;
  for (auto& t : side) walk(t, &out);
  return out;
}

// The subterms to abstract, by hash (term_equal confirms), each with its variable.
struct Abstraction {
  std::multimap<uint64_t, std::pair<TermPtr, TermPtr>> by_hash;  // hash -> (subterm, variable)
  const TermPtr* find(uint64_t h, const TermPtr& t) const {
    auto [lo, hi] = by_hash.equal_range(h);
    for (auto it = lo; it != hi; ++it)
      if (rules::term_equal(it->second.first, t)) return &it->second.second;
    return nullptr;
  }
};

// Rebuilds `t` with the abstracted subterms replaced; returns the new term and the hash of the
// original.
std::pair<TermPtr, uint64_t> replace(const TermPtr& t, const Abstraction& ab) {
  if (t->kind != Term::Kind::App) return {t, walk(t, nullptr).hash};
  uint64_t h = mix(static_cast<uint64_t>(t->kind) + 1, text_hash(t->name));
  h = mix(h, static_cast<uint64_t>(t->value));
  std::vector<TermPtr> args;
  bool changed = false;
  for (auto& a : t->args) {
    auto [na, ah] = replace(a, ab);
    h = mix(h, ah);
    changed = changed || na != a;
    args.push_back(std::move(na));
  }
  if (const TermPtr* v = ab.find(h, t)) return {*v, h};
  return {changed ? Term::app(t->name, std::move(args)) : t, h};
}

// Drops output pairs whose sides are the same term (and, with `dedupe`, pairs equal to an
// earlier pair); recounts the operators.
Equality without_trivial_pairs(const Equality& e, bool dedupe = false) {
  Equality r;
  for (size_t i = 0; i < e.lhs.size(); ++i) {
    if (rules::term_equal(e.lhs[i], e.rhs[i])) continue;
    bool repeated = false;
    for (size_t j = 0; dedupe && j < r.lhs.size() && !repeated; ++j)
      repeated = (rules::term_equal(r.lhs[j], e.lhs[i]) && rules::term_equal(r.rhs[j], e.rhs[i])) ||
                 (rules::term_equal(r.lhs[j], e.rhs[i]) && rules::term_equal(r.rhs[j], e.lhs[i]));
    if (repeated) continue;
    r.lhs.push_back(e.lhs[i]);
    r.rhs.push_back(e.rhs[i]);
  }
  r.lhs_ops = count_ops(r.lhs);
  r.rhs_ops = count_ops(r.rhs);
  return r;
}

// A variable name prefix no variable of `e` starts with.
std::string fresh_prefix(const Equality& e) {
  std::vector<std::string> vars = variables_of(e.lhs);
  for (auto& v : variables_of(e.rhs)) vars.push_back(v);
  std::string prefix = "g";
  auto clashes = [&] {
    for (auto& v : vars)
      if (v.rfind(prefix, 0) == 0) return true;
    return false;
  };
  while (clashes()) prefix += "g";
  return prefix;
}

}  // namespace

std::vector<TermPtr> maximal_common_subterms(const Equality& e, bool skip_outputs) {
  std::vector<std::pair<uint64_t, TermPtr>> left = app_subterms(e.lhs);
  std::vector<std::pair<uint64_t, TermPtr>> right = app_subterms(e.rhs);
  // Common: on the left and (confirmed) on the right; one representative each.
  std::vector<std::pair<uint64_t, TermPtr>> common;
  for (auto& [h, t] : left) {
    bool on_right = false;
    for (auto& [h2, t2] : right)
      if (h2 == h && rules::term_equal(t, t2)) on_right = true;
    if (!on_right) continue;
    bool output = false;
    for (size_t i = 0; skip_outputs && i < e.lhs.size() && !output; ++i)
      output = rules::term_equal(t, e.lhs[i]) || rules::term_equal(t, e.rhs[i]);
    if (output) continue;
    bool seen = false;
    for (auto& [h2, t2] : common)
      if (h2 == h && rules::term_equal(t, t2)) seen = true;
    if (!seen) common.emplace_back(h, t);
  }
  // Maximal: not a proper subterm of another common one.
  std::vector<std::pair<std::string, TermPtr>> out;
  for (auto& [h, t] : common) {
    bool maximal = true;
    for (auto& [h2, t2] : common) {
      if (!maximal) break;
      if (h2 == h && rules::term_equal(t, t2)) continue;
      std::vector<std::pair<uint64_t, TermPtr>> inner;
      walk(t2, &inner);
      for (auto& [h3, t3] : inner)
        if (h3 == h && rules::term_equal(t3, t)) maximal = false;
    }
    if (maximal) out.emplace_back(rules::term_str(t), t);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<TermPtr> terms;
  for (auto& [k, t] : out) terms.push_back(t);
  return terms;
}

Equality abstract_subterms(const Equality& e, const std::vector<TermPtr>& subterms) {
  Abstraction ab;
  std::string prefix = fresh_prefix(e);
  for (size_t i = 0; i < subterms.size(); ++i)
    ab.by_hash.emplace(walk(subterms[i], nullptr).hash,
                       std::make_pair(subterms[i], Term::var(prefix + std::to_string(i + 1))));
  Equality g;
  for (auto& x : e.lhs) g.lhs.push_back(replace(x, ab).first);
  for (auto& x : e.rhs) g.rhs.push_back(replace(x, ab).first);
  return without_trivial_pairs(g);
}

std::vector<Equality> input_generalizations(const Equality& e) {
  std::vector<Equality> out;
  for (auto& t : maximal_common_subterms(e)) {
    Equality g = abstract_subterms(e, {t});
    if (!g.lhs.empty()) out.push_back(std::move(g));
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

namespace {

// True when some output pair has a bare variable on one side that the other side does not
// read: such an equality never holds, so a reduction step that produces one went too far
// (e.g. (ewadd ?a ?b) = (ewadd ?b ?a) peeled into ?a = ?b, ?b = ?a).
bool has_free_variable_pair(const Equality& e) {
  for (size_t i = 0; i < e.lhs.size(); ++i)
    for (int side = 0; side < 2; ++side) {
      const TermPtr& v = side ? e.rhs[i] : e.lhs[i];
      const TermPtr& other = side ? e.lhs[i] : e.rhs[i];
      if (v->kind != Term::Kind::Var) continue;
      std::vector<std::string> reads = variables_of({other});
      if (std::find(reads.begin(), reads.end(), v->name) == reads.end()) return true;
    }
  return false;
}

// True when every output pair that differs has one operator on top of both sides that differs
// in exactly one argument. With two or more, the arguments may be equal only jointly (a scalar
// moved from one operand to the other: (matmul (ewmul ?a (smul ?b ?c)) ?d) =
// (matmul (ewmul ?a ?b) (smul ?d ?c))), and peeling would state a false pair of equalities.
bool one_argument_differs(const Equality& e) {
  for (size_t i = 0; i < e.lhs.size(); ++i) {
    const TermPtr& a = e.lhs[i];
    const TermPtr& b = e.rhs[i];
    if (rules::term_equal(a, b)) continue;
    if (a->args.size() != b->args.size()) return false;
    int differ = 0;
    for (size_t j = 0; j < a->args.size(); ++j)
      differ += !rules::term_equal(a->args[j], b->args[j]);
    if (differ != 1) return false;
  }
  return true;
}

}  // namespace

std::optional<Equality> reduce_common_subgraphs(const Equality& e) {
  Equality cur = e;
  bool changed_any = false;
  for (;;) {
    bool changed = false;
    std::vector<TermPtr> common = maximal_common_subterms(cur, true);
    if (!common.empty()) {
      Equality next = abstract_subterms(cur, common);
      if (next.lhs.empty()) return std::nullopt;
      if (!has_free_variable_pair(next)) {
        cur = std::move(next);
        changed = true;
      }
    }
    if (std::optional<Equality> o = output_generalization(cur)) {
      if (one_argument_differs(cur) && !has_free_variable_pair(*o)) {
        cur = std::move(*o);
        changed = true;
      }
    }
    if (!changed) break;
    changed_any = true;
  }
  Equality r = without_trivial_pairs(cur, true);
  if (r.lhs.empty()) return std::nullopt;
  if (!changed_any && r.lhs.size() == e.lhs.size()) return e;
  r.conditions = e.conditions;
  return r;
}

std::vector<TermPtr> conditions_within(const Equality& e, const std::vector<TermPtr>& conditions) {
  std::vector<std::string> vars = variables_of(e.lhs);
  for (auto& v : variables_of(e.rhs)) vars.push_back(v);
  std::set<std::string> have(vars.begin(), vars.end());
  std::vector<TermPtr> out;
  for (auto& c : conditions) {
    bool inside = true;
    for (auto& v : variables_of({c}))
      if (!have.count(v)) inside = false;
    if (inside) out.push_back(c);
  }
  return out;
}

}  // namespace graphsub::gen
