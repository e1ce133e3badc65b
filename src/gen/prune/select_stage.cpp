// A library over a few new operators keeps only the rules that use one of them.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "gen/stages.h"

namespace graphsub::gen {
namespace {

// True when `t` applies one of `ops` anywhere (split0 and split1 both count as split, a
// longer form as its operator).
bool uses(const rules::TermPtr& t, const std::set<const OpDef*>& ops) {
  if (t->kind != rules::Term::Kind::App) return false;
  if (ops.count(find_op_by_axiom_name(t->name))) return true;
  return std::any_of(t->args.begin(), t->args.end(), [&](auto& a) { return uses(a, ops); });
}

bool uses_any(const std::vector<rules::TermPtr>& terms, const std::set<const OpDef*>& ops) {
  return std::any_of(terms.begin(), terms.end(), [&](auto& t) { return uses(t, ops); });
}

}  // namespace

void select_stage(const GeneratorOptions& opts, GeneratorResult& res, StageLog& log) {
  if (opts.with_ops.empty()) return;
  std::set<const OpDef*> ops;
  for (const std::string& name : opts.with_ops) {
    const OpDef* d = find_op_by_axiom_name(name);
    const bool form = d && std::any_of(d->axiom_forms.begin(), d->axiom_forms.end(),
                                       [&](const AxiomForm& f) { return f.name == name; });
    if (!d || (d->axiom_name != name && !form))
      throw Error(fmt::format("--with-ops: '{}' is not an operator of the axiom language", name));
    ops.insert(d);
  }
  std::erase_if(res.rules,
                [&](const Equality& e) { return !uses_any(e.lhs, ops) && !uses_any(e.rhs, ops); });
  res.lifted = lifted_count(res.rules);
  log.count("with a --with-ops operator", res.rules.size());
}

}  // namespace graphsub::gen
