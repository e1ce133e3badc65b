#pragma once
// What the instance enumeration (for_each_instance) and the instance sampler
// (sample_instances) share: cheap necessary conditions for an application to type-check (they
// only skip argument types that cannot fit; shape inference still decides for the others),
// and a table numbering the types they meet.
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor_type.h"
#include "rules/axiom_ops.h"
#include "rules/instances.h"

namespace graphsub::rules {

// A key that the tensor arguments of an application must share to type-check (equal shapes
// for ewadd, equal dimensions outside the axis for concat, the inner size for matmul, ...).
// `arg`: the position among the tensor arguments. nullopt: this argument cannot fit whatever
// the others are.
using TypeKey = std::vector<int64_t>;
std::optional<TypeKey> type_key(const Term& t, const AxiomOp& op, size_t arg, const TensorType& ty,
                                const ParamAssignment& params);

// Cheap necessary conditions on an application's argument types beyond the key they share
// (type_key), checked before shape inference, which throws on each failure: a convolution's
// channel groups (and, without padding, its kernel inside the image); the broadcasting
// operators' dimensions (aligned from the last axis, equal or 1); the language's attention
// (matrices: q and k as wide, k and v as long). Absent arguments (constants) pass.
// `unpadded`: the term is a conv with `valid` padding (unpadded_conv).
bool arguments_may_fit(const AxiomOp& op, bool unpadded,
                       std::span<const std::optional<TensorType>> args);

// True when the padding parameter of a conv term is `valid` for these parameters.
bool unpadded_conv(const Term& t, const ParamAssignment& params);

// True when `t` applies a constant operator (cpool, iconv, ...): such arguments have no
// type of their own; the application's shape inference sizes them.
bool is_constant_term(const TermPtr& t);

// A compact byte key of an optional type (shape and split points), for memo tables.
void append_type_key(std::string& k, const std::optional<TensorType>& t);

// The distinct types met in an instance search, numbered in order of first sight, so that
// memo tables can key on small integers.
class TypeTable {
 public:
  uint32_t id(const TensorType& t);  // added when new
  const TensorType& type(uint32_t id) const { return types_[id]; }

 private:
  std::deque<TensorType> types_;  // by id; a deque keeps references stable
  std::unordered_map<std::string, uint32_t> ids_;
  std::string key_;  // the key of the latest lookup
};

}  // namespace graphsub::rules
