#pragma once
// The generator's operators: one variant per operator of the axiom language and per choice of
// its parameters (conv stride 1 / padding same / act relu is one variant). Constants (cpool,
// iconv, imatmul, iewmul) are variants without tensor inputs whose sizes come from the pool.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "core/attrs.h"
#include "gen/space/pool.h"
#include "ops/op_def.h"
#include "rules/rule.h"

namespace graphsub::gen {

// What a tensor input slot of a variant accepts.
enum class SlotRule : uint8_t {
  Any,
  Data,        // a tensor computed from at least one data tensor (conv and pooling inputs)
  Weight,      // a tensor computed only from weights, constants and scalars (conv kernels)
  PoolWeight,  // a weight of the pool itself ("enlarge only on inputs")
};

// Tensor inputs an enumerated operator may read: up to four for the runtimes' fused kernels (a
// skip normalization's input, skip, gain and bias; attention's q, k and v).
constexpr int kMaxArity = 4;
constexpr int kMaxOutputs = 2;

struct GenOp {
  const OpDef* def = nullptr;
  std::string name;                         // axiom name: "conv", "split", "cpool"
  std::vector<AxiomParam> params;           // one value per parameter of its language form
  Attrs const_attrs;                        // constants only: complete attributes
  Attrs alt_const_attrs;                    // the same, sized for the re-test pool (alt_shape)
  int arity = 0;                            // tensor inputs
  int num_outputs = 1;                      // outputs it exposes: split has two
  std::array<SlotRule, kMaxArity> slots{};  // SlotRule::Any
  bool commutative = false;                 // found by testing: op(a,b) == op(b,a)
  int alias_of = -1;                        // found by testing: a lower variant computing the same
  // Constants only: the operators (and input slots) that may read this constant, the ones the
  // rule language sizes it from (a conv kernel, a matmul operand, an ewmul/ewadd partner).
  std::vector<std::pair<std::string, int>> readers;

  std::string label() const;  // "conv 1 same relu"
  bool may_be_read_by(const GenOp& reader, int slot) const;
};

// Parameter domains by name (stride, padding, act, kernel, axis), as declared in the axioms;
// an entry "op.param" (poolavg.kernel) overrides the domain for that operator alone.
using ParamDomains = std::map<std::string, std::vector<AxiomParam>>;

// The parameter domains declared in an axioms file (specs/operators.axioms).
ParamDomains domains_of(const rules::RuleSet& axioms);

// The re-test pool's shapes: every dimension d > 1 becomes d + 1, except the spatial
// dimensions of 4-d weights (kernel sizes are what parameters like enlarge's refer to).
// Candidates that hold only by a coincidence of the fingerprint pool's sizes (a valid conv
// whose output is 1x1 ignores its stride) fail on these shapes.
Shape alt_shape(const Shape& s, Role role);
int64_t alt_dim(int64_t d);

// The generator operator set: every operator of the axiom language (design.md section 2).
std::vector<std::string> all_generator_ops();

// Every variant of the named operators over the cross product of their parameter domains, in
// the order of `op_names` (then parameter order). Constants get one variant per size the pool
// calls for. Throws Error for an unknown operator or a parameter without a domain.
std::vector<GenOp> make_variants(const std::vector<std::string>& op_names,
                                 const ParamDomains& domains, const std::vector<PoolTensor>& pool);

}  // namespace graphsub::gen
