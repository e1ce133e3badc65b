#pragma once
// The operators of the axiom/rule language, resolved against the operator registry: a term
// (name params... tensors...) applies an OpDef whose axiom_name is `name`. `split0`/`split1`
// denote output 0/1 of the split operator (OpDef::axiom_outputs).
#include <string>
#include <string_view>
#include <vector>

#include "ops/op_def.h"
#include "rules/term.h"

namespace graphsub::rules {

struct AxiomOp {
  std::string name;  // name in the language, e.g. "split1"
  const OpDef* op = nullptr;
  uint32_t output = 0;  // which output of `op` the term denotes
  // Parameter domain names (OpDef::axiom_params), in argument order.
  const std::vector<std::string>* params = nullptr;
  size_t num_tensors = 0;  // fixed arity: optional inputs left out, concat binary
  bool is_constant() const { return op->cls == OpClass::Source; }
  size_t num_params() const { return params->size(); }
};

// Null when `name` is not an operator of the language.
const AxiomOp* find_axiom_op(std::string_view name);
// Every operator of the language, sorted by name (for messages and the verifier).
const std::vector<AxiomOp>& axiom_ops();

// Conversions between parameter terms (Int, Symbol) and parameter values.
AxiomParam param_value(const Term& t);
TermPtr param_term(const AxiomParam& p);
std::string param_str(const AxiomParam& p);

}  // namespace graphsub::rules
