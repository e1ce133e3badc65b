#include "rules/orientations.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "ir/hash.h"

namespace graphsub::rules {

namespace {

void collect_vars(const Term& t, std::set<std::string>& out) {
  if (t.kind == Term::Kind::Var) out.insert(t.name);
  for (auto& a : t.args) collect_vars(*a, out);
}

// Names of the variables in `terms`, in order of first occurrence (pre-order, left to right).
void first_occurrence(const Term& t, std::vector<std::string>& order, std::set<std::string>& seen) {
  if (t.kind == Term::Kind::Var && seen.insert(t.name).second) order.push_back(t.name);
  for (auto& a : t.args) first_occurrence(*a, order, seen);
}

std::vector<std::string> first_occurrence(const std::vector<TermPtr>& terms) {
  std::vector<std::string> order;
  std::set<std::string> seen;
  for (auto& t : terms) first_occurrence(*t, order, seen);
  return order;
}

Rule reversed(const Rule& r) {
  Rule out = r;
  out.both_ways = false;
  out.name = r.name + std::string(kReverseSuffix);
  std::swap(out.source, out.target);
  std::vector<TermPtr> all = out.source;
  all.insert(all.end(), out.target.begin(), out.target.end());
  std::set<std::string> tensors(r.tensor_vars.begin(), r.tensor_vars.end());
  out.tensor_vars.clear();
  for (auto& v : first_occurrence(all))
    if (tensors.count(v)) out.tensor_vars.push_back(v);
  return out;
}

TermPtr renamed(const TermPtr& t, const std::map<std::string, std::string>& names) {
  if (t->kind == Term::Kind::Var) return Term::var(names.at(t->name));
  if (t->kind != Term::Kind::App) return t;
  std::vector<TermPtr> args;
  for (auto& a : t->args) args.push_back(renamed(a, names));
  return Term::app(t->name, std::move(args));
}

// content_key of one arrangement: `a` = `b`, outputs in the given order.
std::string arrangement_key(const Rule& r, const std::vector<TermPtr>& a,
                            const std::vector<TermPtr>& b) {
  std::map<std::string, std::string> domain_of;
  for (auto& p : r.param_vars) domain_of[p.name] = p.domain;
  std::vector<TermPtr> all = a;
  all.insert(all.end(), b.begin(), b.end());
  std::map<std::string, std::string> names;
  std::string params;
  for (auto& v : first_occurrence(all)) {
    auto d = domain_of.find(v);
    std::string name = fmt::format("{}{}", d == domain_of.end() ? 't' : 'p', names.size());
    if (d != domain_of.end()) params += fmt::format(" ({} {})", name, d->second);
    names[v] = std::move(name);
  }
  std::string key;
  for (auto& t : a) key += term_str(renamed(t, names)) + " ";
  key += "=";
  for (auto& t : b) key += " " + term_str(renamed(t, names));
  std::vector<std::string> conditions;
  for (auto& c : r.constraints) conditions.push_back(term_str(renamed(c, names)));
  std::sort(conditions.begin(), conditions.end());
  for (auto& c : conditions) key += " | " + c;
  return key + " |" + params;
}

}  // namespace

bool usable_direction(const std::vector<TermPtr>& source, const std::vector<TermPtr>& target,
                      const std::vector<TermPtr>& conditions) {
  std::set<std::string> bound, used;
  for (auto& t : source) {
    if (t->kind != Term::Kind::App) return false;
    collect_vars(*t, bound);
  }
  for (auto& t : target) collect_vars(*t, used);
  for (auto& t : conditions) collect_vars(*t, used);
  return std::includes(bound.begin(), bound.end(), used.begin(), used.end());
}

std::vector<Rule> orientations(const Rule& r) {
  if (!r.both_ways) return {r};
  std::vector<Rule> out;
  if (usable_direction(r.source, r.target, r.constraints)) {
    out.push_back(r);
    out.back().both_ways = false;
  }
  if (usable_direction(r.target, r.source, r.constraints)) out.push_back(reversed(r));
  return out;
}

Rule statement(const Rule& r) {
  std::vector<Rule> directed = orientations(r);
  if (directed.empty()) return r;
  directed.front().name = r.name;
  return directed.front();
}

std::string content_key(const Rule& r) {
  std::vector<size_t> order(r.source.size());
  std::iota(order.begin(), order.end(), 0);
  // Output orders are tried up to 4 outputs (24 orders); beyond that the order is the file's.
  bool permute = order.size() <= 4;
  std::string best;
  do {
    std::vector<TermPtr> s, t;
    for (size_t i : order) {
      s.push_back(r.source[i]);
      t.push_back(r.target[i]);
    }
    for (const std::string& k : {arrangement_key(r, s, t), arrangement_key(r, t, s)})
      if (best.empty() || k < best) best = k;
  } while (permute && std::next_permutation(order.begin(), order.end()));
  return best;
}

std::string content_name(const Rule& r) {
  std::string key = content_key(r);
  return fmt::format("r-{:08x}", static_cast<uint32_t>(hash_bytes(key.data(), key.size()) >> 32));
}

bool is_content_name(std::string_view name) {
  return name.size() == 10 && name.substr(0, 2) == "r-" &&
         name.find_first_not_of("0123456789abcdef", 2) == std::string_view::npos;
}

}  // namespace graphsub::rules
