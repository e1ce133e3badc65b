#pragma once
// Candidate rules as equalities of terms in the rule language, with a canonical form that is
// the same for every rule equal up to renaming of its tensor variables, orientation and the
// order of its outputs.
#include <string>
#include <vector>

#include "gen/classify/candidates.h"
#include "rules/rule.h"

namespace graphsub::gen {

struct Equality {
  std::vector<rules::TermPtr> lhs, rhs;  // lhs[i] = rhs[i]
  // Conditions the equality is claimed under ((where ...) of the rule), e.g. that a conv is
  // dense; empty for an unconditional equality. Part of the key.
  std::vector<rules::TermPtr> conditions;
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
// orientation and output order whose text is smallest; sets key and skeleton. Conditions are
// renamed alike, sorted, and appended to the key (they do not choose the arrangement).
// `also` (optional): terms over the same variables renamed the same way, outside the key.
void canonicalize(Equality& e, std::vector<rules::TermPtr>* also = nullptr);

// The canonical equality whose key is `key` (canonicalize's output, conditions included):
// lets a store of classes, or a rank that receives rules from another, keep keys only.
// Throws Error on a text that is no canonical key.
// `check` false: a key this run made itself (a batch item, a report entry) is read without
// canonicalizing it again, and without its skeleton.
Equality equality_from_key(const std::string& key, bool check = true);

// True when `specific` is `general` with its variables renamed, several possibly to one
// (terms only: conditions are not compared).
bool is_instance(const Equality& specific, const Equality& general);

// Parameter variables (a rule that holds for every value of a domain) are named
// "p_<domain>": ?p_act, ?p_stride. Canonical forms keep their names.
inline constexpr const char* kParamVarPrefix = "p_";
bool is_param_var(const std::string& name);
std::string param_var_domain(const std::string& name);
std::vector<std::string> param_vars_of(const std::vector<rules::TermPtr>& terms);
// The equalities of `rules` with a parameter variable on either side (GeneratorResult::lifted).
uint64_t lifted_count(const std::vector<Equality>& rules);

// The tensor variables of an equality's side, in order of first occurrence.
std::vector<std::string> variables_of(const std::vector<rules::TermPtr>& terms);

// The shape conditions that hold in a candidate's instance and that the verifier may need as
// hypotheses, in pool names, sorted and without repeats: for every conv whose data and kernel
// are pool tensors and whose kernel reads every input channel there,
// (= (dim ?kernel 1) (dim ?data 1)) (grouped convs over concatenated kernels change their
// groups, so some equalities hold only for dense convs); for every matmul of two pool
// matrices, (= (dim ?x 1) (dim ?y 0)) (the axiom splitting a matmul's inner dimension applies
// only where the splits of both operands meet, and the solver knows no shapes).
std::vector<rules::TermPtr> shape_conditions(const Space& s, const Candidate& c);

// The conditions present in both lists (by text), sorted.
std::vector<rules::TermPtr> common_conditions(const std::vector<rules::TermPtr>& a,
                                              const std::vector<rules::TermPtr>& b);

// Operators in a side (distinct subterms that are applications).
int count_ops(const std::vector<rules::TermPtr>& terms);

}  // namespace graphsub::gen
