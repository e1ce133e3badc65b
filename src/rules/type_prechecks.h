#pragma once
// What the instance enumeration (for_each_instance) and the instance sampler
// (sample_instances) share: cheap necessary conditions for an application to type-check (they
// only skip argument types that cannot fit; shape inference still decides for the others),
// and a table numbering the types they meet.
#include <cstdint>
#include <deque>
#include <optional>
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

// A cheap necessary condition on the argument types of a convolution (x [N,C,H,W], w
// [O,C/g,kh,kw]): the channel count splits into groups that divide the output channels.
// Without padding, the kernel must also fit in the image.
bool conv_may_fit(const TensorType& x, const TensorType& w, bool unpadded);

// A cheap necessary condition for the language's broadcasting operators (add, mul): aligned
// from the last axis, each pair of dimensions is equal or one of them is 1.
bool is_broadcasting(const AxiomOp& op);
bool broadcast_may_fit(const TensorType& a, const TensorType& b);

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
};

}  // namespace graphsub::rules
