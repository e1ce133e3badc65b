#include "gen/unfold/unfold.h"

#include <fmt/format.h>

#include <deque>
#include <set>

#include "core/error.h"
#include "gen/unfold/term_rewrite.h"
#include "rules/axiom_ops.h"
#include "rules/rule_parser.h"

namespace graphsub::gen {
namespace {

using rules::Term;
using rules::TermPtr;

// A fused term as the generator's equalities spell it: a parameter variable of domain D named
// ?p_D (equality.h), tensor variables named otherwise (operators and arities are the parser's).
void check_term(const TermPtr& t, const std::string& text) {
  if (t->kind != Term::Kind::App) return;
  const rules::AxiomOp* op = rules::find_axiom_op(t->name);
  for (size_t i = 0; i < t->args.size(); ++i) {
    const TermPtr& a = t->args[i];
    if (i < op->num_params()) {
      const std::string& domain = (*op->params)[i];
      if (a->kind == Term::Kind::Var &&
          (!is_param_var(a->name) || param_var_domain(a->name) != domain))
        throw Error(
            fmt::format("unfold: parameter {} of {} in {} is a variable of domain {}: "
                        "name it ?{}{}",
                        i + 1, t->name, text, domain, kParamVarPrefix, domain));
    } else if (a->kind == Term::Kind::Var && is_param_var(a->name)) {
      throw Error(fmt::format("unfold: tensor ?{} of {} in {} has a parameter's name", a->name,
                              t->name, text));
    } else {
      check_term(a, text);
    }
  }
}

// `t` with the definitions applied until none matches; a form reached twice is kept once.
void unfold_all(const TermPtr& t, const std::vector<TermRewrite>& defs, const std::string& text,
                int step, std::set<std::string>& seen, std::vector<TermPtr>& out) {
  if (step == 100)
    throw Error(fmt::format("unfold: the definitions of {} still apply after 100 steps", text));
  std::vector<TermPtr> next = rewrites_at_first_match(t, defs);
  for (const TermPtr& n : next) unfold_all(n, defs, text, step + 1, seen, out);
  if (next.empty() && seen.insert(rules::term_str(t)).second) out.push_back(t);
}

}  // namespace

UnfoldResult unfold_fused(const rules::RuleSet& axioms, const UnfoldOptions& o) {
  if (o.terms.empty()) throw Error("unfold: no fused term given");
  if (o.unfold.empty()) throw Error("unfold: no defining axiom given");
  if (o.depth < 0 || o.depth > 8)
    throw Error(fmt::format("unfold: depth {} is not 0 to 8", o.depth));
  std::vector<TermRewrite> defs, via;
  for (auto& n : o.unfold) defs.push_back(term_rewrite(axioms, n));
  for (auto& n : o.via) via.push_back(term_rewrite(axioms, n));
  UnfoldResult res;
  std::set<std::string> keys;
  for (const std::string& text : o.terms) {
    TermPtr fused = rules::parse_term(text);
    if (fused->kind != Term::Kind::App)
      throw Error(fmt::format("unfold: {} is no application", text));
    check_term(fused, text);
    std::set<std::string> seen;
    std::vector<TermPtr> bases;
    unfold_all(fused, defs, text, 0, seen, bases);
    if (bases.size() == 1 && rules::term_equal(bases.front(), fused))
      throw Error(fmt::format("unfold: no defining axiom applies to {}", text));
    ++res.unfolded;
    // Breadth first, so that each form is reached by the fewest applications of `via`.
    std::deque<std::pair<TermPtr, int>> queue;
    for (TermPtr& base : bases) queue.push_back({base, 0});
    while (!queue.empty()) {
      auto [form, steps] = queue.front();
      queue.pop_front();
      Equality e{.lhs = {form}, .rhs = {fused}};
      canonicalize(e);
      if (keys.insert(e.key).second) res.equalities.push_back(std::move(e));
      if (steps == o.depth) continue;
      for (const TermRewrite& r : via)
        for (TermPtr& next : rewrites_once(form, r))
          if (seen.insert(rules::term_str(next)).second) {
            if (seen.size() > o.max_forms)
              throw Error(fmt::format("unfold: {} has more than {} forms at depth {}", text,
                                      o.max_forms, o.depth));
            queue.push_back({std::move(next), steps + 1});
          }
    }
    res.forms += seen.size();
  }
  return res;
}

}  // namespace graphsub::gen
