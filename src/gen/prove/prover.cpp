#include "gen/prove/prover.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.h"

namespace graphsub::gen {

rules::Rule to_rule(const Equality& e, const std::string& name, bool reversed) {
  rules::Rule r;
  r.name = name;
  r.source = reversed ? e.rhs : e.lhs;
  r.target = reversed ? e.lhs : e.rhs;
  std::vector<rules::TermPtr> all = r.source;
  all.insert(all.end(), r.target.begin(), r.target.end());
  r.tensor_vars = variables_of(all);
  r.constraints = e.conditions;
  for (auto& p : param_vars_of(all)) r.param_vars.push_back({p, param_var_domain(p)});
  return r;
}

bool usable_direction(const std::vector<rules::TermPtr>& src,
                      const std::vector<rules::TermPtr>& dst) {
  for (auto& t : src)
    if (t->kind != rules::Term::Kind::App) return false;
  std::vector<std::string> sv = variables_of(src), sp = param_vars_of(src);
  std::set<std::string> bound(sv.begin(), sv.end());
  bound.insert(sp.begin(), sp.end());
  for (auto& v : variables_of(dst))
    if (!bound.count(v)) return false;
  for (auto& v : param_vars_of(dst))
    if (!bound.count(v)) return false;
  return true;
}

int num_vars(const Equality& e) {
  std::vector<rules::TermPtr> all = e.lhs;
  all.insert(all.end(), e.rhs.begin(), e.rhs.end());
  return static_cast<int>(variables_of(all).size());
}

void CallTimes::add(const ProofOutcome& o) {
  std::string k = o.kind.empty() ? (o.proved ? "proved" : "not proved") : o.kind;
  ms[k].push_back(o.numeric_ms + o.solver_ms);
  ProverTimes& t = totals[k];
  ++t.calls;
  t.numeric_ms += o.numeric_ms;
  t.solver_ms += o.solver_ms;
  t.max_resources = std::max(t.max_resources, o.resources);
}

std::map<std::string, ProverTimes> CallTimes::summary() {
  for (auto& [k, v] : ms) {
    std::sort(v.begin(), v.end());
    totals[k].median_ms = v[v.size() / 2];
    totals[k].max_ms = v.back();
  }
  return totals;
}

std::vector<ProofOutcome> prove_all(const Prover& prove, const std::vector<const Equality*>& eqs,
                                    int max_vars, uint64_t& calls, CallTimes& times) {
  std::vector<ProofOutcome> out(eqs.size());
  std::vector<rules::Rule> batch;
  std::vector<size_t> where;
  for (size_t i = 0; i < eqs.size(); ++i) {
    const Equality& e = *eqs[i];
    bool fwd = usable_direction(e.lhs, e.rhs);
    if (!fwd && !usable_direction(e.rhs, e.lhs)) {
      out[i].reason = "not expressible as a rule (a bare variable or unbound variable either way)";
      out[i].kind = kNotExpressible;
      continue;
    }
    if (int n = num_vars(e); max_vars > 0 && n > max_vars) {
      out[i].reason = fmt::format(
          "not tried: {} tensor variables, more than the {} the prover is given (--max-vars)", n,
          max_vars);
      out[i].kind = kTooManyVars;
      continue;
    }
    batch.push_back(to_rule(e, fmt::format("c{}", i), !fwd));
    where.push_back(i);
  }
  calls += batch.size();
  if (batch.empty()) return out;
  std::vector<ProofOutcome> got = prove(batch);
  if (got.size() != batch.size()) throw Error("prover returned the wrong number of outcomes");
  for (size_t k = 0; k < where.size(); ++k) {
    times.add(got[k]);
    out[where[k]] = std::move(got[k]);
  }
  return out;
}

}  // namespace graphsub::gen
