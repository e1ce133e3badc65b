#pragma once
// Translation of the rule language into Z3 (the only stage that talks to Z3): tensors are one
// uninterpreted sort, each operator of the language an uninterpreted function over integer
// parameters and tensors, and (dim t a) an uninterpreted integer function. Symbols (same,
// relu, ...) are encoded as distinct integers per the declared domains. Axioms become
// universally quantified equalities, guarded by their parameters' domains and conditions,
// with their non-variable sides as E-matching patterns.
#include <z3++.h>

#include <map>
#include <string>

#include "rules/rule.h"

namespace graphsub::verify {

class Z3Encoding {
 public:
  // `domains` supplies the declared domains (and through them the symbols).
  Z3Encoding(z3::context& ctx, const rules::RuleSet& domains);

  z3::sort tensor_sort() const { return tensor_; }

  // Variables: tensor variables as constants of the tensor sort, parameter variables as
  // integer constants. `prefix` keeps the names of different rules apart.
  struct Vars {
    std::map<std::string, z3::expr> tensors;
    std::map<std::string, z3::expr> params;
  };
  Vars declare(const rules::Rule& r, const std::string& prefix);

  z3::expr term(const rules::TermPtr& t, const Vars& v);
  z3::expr condition(const rules::TermPtr& c, const Vars& v);
  // (or (= p v1) (= p v2) ...) for a parameter of the named domain.
  z3::expr in_domain(const z3::expr& p, const std::string& domain);
  // The guard of a rule or axiom: domains of its parameters and its conditions.
  z3::expr guard(const rules::Rule& r, const Vars& v);
  // What the well-typedness of a rule's own terms implies about sizes, which the conditions
  // of axioms over two concats need: equal sizes on every axis for the operands of ewadd and
  // ewmul (and their result's), off the concatenation axis for those of concat (and the sum
  // along it). A rule claims its equality only where both sides type-check, so these hold in
  // every instance it speaks of (an axis past a tensor's rank counts as size 0).
  z3::expr well_typed(const rules::Rule& r, const Vars& v);
  // The axiom as a quantified formula with patterns.
  z3::expr axiom(const rules::Rule& a);

  int64_t encode(const rules::Term& param_value) const;  // Int or Symbol

 private:
  z3::func_decl op_decl(const std::string& name, size_t num_params, size_t num_tensors);
  z3::context& ctx_;
  const rules::RuleSet& domains_;
  z3::sort tensor_;
  z3::func_decl dim_;
  std::map<std::string, int64_t> symbol_codes_;
  std::map<std::string, z3::func_decl> decls_;
};

}  // namespace graphsub::verify
