#pragma once
// Rules that introduce a fused operator, generated from its definition. The enumerator builds
// every graph of up to 3 or 4 operators; multi-head attention as exporters write it spans 9 to
// 13 (heads split out of each projection, moved before the sequence, two batched products and
// a softmax, the heads moved back and merged), out of its reach. Here the fused term itself
// (ort_mha_heads ?h 1 ?q ?k ?v) is unfolded by the axioms that define it until only the
// operators it is made of remain, and that form is varied by other axioms (a permutation
// composed into the key's transpose, a scalar factor moved through a split or out of a
// product) into the forms exporters write. Each form is an equality with the fused term, which
// the verifier then proves from the axioms like any other (driver/unfold_job.h).
#include <cstdint>
#include <string>
#include <vector>

#include "gen/classify/equality.h"
#include "rules/rule.h"

namespace graphsub::gen {

struct UnfoldOptions {
  std::vector<std::string> terms;   // the fused terms to unfold, as text
  std::vector<std::string> unfold;  // axioms that define them, read left to right
  std::vector<std::string> via;     // axioms (NAME, or NAME~rev right to left) that vary a form
  int depth = 2;                    // applications of `via` on the way to a form, at most
  size_t max_forms = 2000;          // forms of one fused term, at most (an error past it)
};

struct UnfoldResult {
  // lhs: a form, rhs: the fused term; canonical (canonicalize), in the order found.
  std::vector<Equality> equalities;
  size_t unfolded = 0;  // fused terms unfolded
  size_t forms = 0;     // distinct forms reached, the unfolded ones included
};

// Throws Error for a term that does not parse, an axiom that cannot rewrite terms
// (term_rewrite.h), an unfolding that does not end (100 steps), or more than max_forms forms.
UnfoldResult unfold_fused(const rules::RuleSet& axioms, const UnfoldOptions& o);

}  // namespace graphsub::gen
