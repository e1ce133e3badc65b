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

BatchItem batch_item(const Equality& e, int max_vars) {
  BatchItem it;
  it.key = e.key;
  it.eq = &e;
  it.vars = num_vars(e);
  bool fwd = usable_direction(e.lhs, e.rhs);
  if (!fwd && !usable_direction(e.rhs, e.lhs))
    it.status = BatchItem::NotExpressible;
  else if (max_vars > 0 && it.vars > max_vars)
    it.status = BatchItem::TooManyVars;
  else
    it.status = fwd ? BatchItem::Forward : BatchItem::Reversed;
  return it;
}

std::vector<ProofOutcome> prove_all(const Prover& prove, const std::vector<BatchItem>& items,
                                    int max_vars, uint64_t& calls, CallTimes& times,
                                    const ChecksHere& checks_here) {
  std::vector<ProofOutcome> out(items.size());
  std::vector<rules::Rule> batch;
  std::vector<size_t> where;
  for (size_t i = 0; i < items.size(); ++i) {
    const BatchItem& it = items[i];
    if (it.status == BatchItem::NotExpressible) {
      out[i].reason = "not expressible as a rule (a bare variable or unbound variable either way)";
      out[i].kind = kNotExpressible;
      continue;
    }
    if (it.status == BatchItem::TooManyVars) {
      out[i].reason = fmt::format(
          "not tried: {} tensor variables, more than the {} the prover is given (--max-vars)",
          it.vars, max_vars);
      out[i].kind = kTooManyVars;
      continue;
    }
    std::string name = fmt::format("c{}", i);
    bool reversed = it.status == BatchItem::Reversed;
    // Only the rules this rank checks are built, its own classes' among them too: on R ranks
    // the others' are (R-1)/R of a batch that every rank walks.
    if (!checks_here(batch.size()))
      batch.push_back(rules::Rule{.name = std::move(name)});  // another rank checks it
    else if (it.eq)
      batch.push_back(to_rule(*it.eq, name, reversed));
    else
      batch.push_back(to_rule(equality_from_key(it.key, false), name, reversed));
    where.push_back(i);
  }
  calls += batch.size();
  if (batch.empty()) return out;
  std::vector<ProofOutcome> got = prove(batch);
  batch.clear();
  batch.shrink_to_fit();
  if (got.size() != where.size()) throw Error("prover returned the wrong number of outcomes");
  for (size_t k = 0; k < where.size(); ++k) {
    times.add(got[k]);
    out[where[k]] = std::move(got[k]);
  }
  return out;
}

}  // namespace graphsub::gen
