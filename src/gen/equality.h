#pragma once
// Candidate rules as equalities of terms in the rule language, with a canonical form that is
// the same for every rule equal up to renaming of its tensor variables, orientation and the
// order of its outputs.
#include <string>
#include <vector>

#include "gen/candidates.h"
#include "rules/rule.h"

namespace graphsub::gen {

struct Equality {
  std::vector<rules::TermPtr> lhs, rhs;  // lhs[i] = rhs[i]
  int lhs_ops = 0, rhs_ops = 0;
  std::string key;       // canonical text (after canonicalize)
  std::string skeleton;  // the canonical text with variables erased
};

// The terms of a candidate after the re-test (outputs paired as in a_out/b_out); the pool's
// tensor names are the variables.
Equality equality_of(const Space& s, const Candidate& c);

// The term one tensor of a side denotes.
rules::TermPtr side_term(const Space& s, const CompactGraph& g, TensorId t);

// Renames the variables to a, b, c, ... in order of first occurrence, and chooses the
// orientation and output order whose text is smallest; sets key and skeleton.
void canonicalize(Equality& e);

// True when `specific` is `general` with its variables renamed, several possibly to one.
bool is_instance(const Equality& specific, const Equality& general);

// Parameter variables (a rule that holds for every value of a domain) are named
// "p_<domain>": ?p_act, ?p_stride. Canonical forms keep their names.
inline constexpr const char* kParamVarPrefix = "p_";
bool is_param_var(const std::string& name);
std::string param_var_domain(const std::string& name);
std::vector<std::string> param_vars_of(const std::vector<rules::TermPtr>& terms);

// The tensor variables of an equality's side, in order of first occurrence.
std::vector<std::string> variables_of(const std::vector<rules::TermPtr>& terms);

// Operators in a side (distinct subterms that are applications).
int count_ops(const std::vector<rules::TermPtr>& terms);

}  // namespace graphsub::gen
