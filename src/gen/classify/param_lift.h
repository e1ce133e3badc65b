#pragma once
// Parameter lifting: classes that differ only in the value of one parameter domain, with a
// class for every value the axioms declare, are one rule with a parameter variable:
//   (conv 1 same none ?x (enlarge 3 ?w)) = (conv 1 same none ?x ?w), and the same for every
//   activation  =>  (conv 1 same ?p_act ?x (enlarge 3 ?w)) = (conv 1 same ?p_act ?x ?w).
// Every occurrence of the value in that domain becomes the variable. Lifts nest (the act
// variable first, then the stride). One proof of the lifted rule covers all its instances.
#include <string>
#include <vector>

#include "gen/classify/equality.h"
#include "gen/space/gen_op.h"
#include "ir/report.h"

namespace graphsub::gen {

struct Lift {
  Equality eq;                  // canonical, with one or more ?p_<domain> variables
  std::vector<size_t> members;  // the classes it covers (indices into the input)
  int level = 1;                // number of lifted domains
};

// Every occurrence of value `v` in a parameter argument of domain `domain` becomes ?p_<domain>.
Equality lift_value(const Equality& e, const std::string& domain, const AxiomParam& v);

// All lifts of `classes` (canonical equalities) whose instances cover every value of the
// declared domain; sorted by level (most general first), then by key.
// `threads`: worker threads for canonicalizing the lifted forms (the result does not depend
// on them).
std::vector<Lift> find_lifts(const std::vector<const Equality*>& classes,
                             const ParamDomains& declared, int threads = 1,
                             Reporter& rep = null_reporter());

}  // namespace graphsub::gen
