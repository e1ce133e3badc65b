#pragma once
// Shape inference of one application for given argument types, per thread and across rules:
// the same operators over the same small shapes recur in rule after rule, in the sampled
// instance search (instance_sampler.cpp) and in the bottom-up one (instances.cpp) alike.
// Types and applications (operator, parameter values and constants, without the tensor
// arguments) are numbered, so a result is found by a 128-bit key. A failed inference is kept
// too: most combinations tried do not type-check, and each failure was an exception with a
// formatted message.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include "core/tensor_type.h"
#include "rules/axiom_ops.h"
#include "rules/instances.h"
#include "rules/type_prechecks.h"

namespace graphsub::rules {

class InferenceCache {
 public:
  // Tensor arguments an application may have to be kept (GroupQueryAttention with a past
  // has five). Each argument's id takes 32 bits of the key.
  static constexpr size_t kMaxTensorArgs = 5;

  static InferenceCache& of_thread();
  int32_t type_id(const TensorType& t) { return static_cast<int32_t>(types_.id(t)); }
  const TensorType& type(int32_t id) const { return types_.type(static_cast<uint32_t>(id)); }
  // The number of an application's signature (application_signature).
  uint32_t signature_id(const std::string& signature);

  struct Key {
    uint64_t hi, lo, last;  // signature and first argument, the next two, the last two
    bool operator==(const Key&) const = default;
  };
  // `arg_ids`: each tensor argument's type id + 1 in argument order, 0 for a constant; at
  // most kMaxTensorArgs of them.
  static Key key_of(uint32_t signature, std::span<const uint64_t> arg_ids);

  // The result type id (-1: ill-typed), computing it with `infer` when not known.
  template <class Infer>
  int32_t result(const Key& key, Infer&& infer) {
    if (auto it = results_.find(key); it != results_.end()) return it->second;
    std::optional<TensorType> t = infer();
    if (results_.size() >= kSize) results_.clear();  // bounded memory
    int32_t id = t ? type_id(*t) : -1;
    results_.emplace(key, id);
    return id;
  }

 private:
  // Results a thread holds before it starts over (about 50 bytes each).
  static constexpr size_t kSize = size_t{1} << 18;
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return (k.hi * 0x9E3779B97F4A7C15ull ^ k.lo) * 0xC2B2AE3D27D4EB4Full ^ k.last;
    }
  };
  TypeTable types_;
  std::unordered_map<std::string, uint32_t> signature_ids_;
  std::unordered_map<Key, int32_t, KeyHash> results_;
};

// An application without its tensor arguments, with the parameter assignment it is typed
// under: "conv 1 same none _ _|p_act=relu;". Two applications with one signature and the same
// argument types have the same type.
std::string application_signature(const TermPtr& t, const AxiomOp& op,
                                  const ParamAssignment& params);

}  // namespace graphsub::rules
