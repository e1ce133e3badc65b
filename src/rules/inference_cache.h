#pragma once
// Shape inference of one application for given argument types, per thread and across rules:
// the same operators over the same small shapes recur in rule after rule, in the sampled
// instance search (instance_sampler.cpp) and in the bottom-up one (instances.cpp) alike.
// Types and applications (operator, parameter values and constants, without the tensor
// arguments) are numbered, so a result is found by a 128-bit key. A failed inference is kept
// too: most combinations tried do not type-check, and each failure was an exception with a
// formatted message.
#include <climits>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

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
    if (slots_.empty()) slots_.resize(kInitialSlots);
    size_t at = find(key);
    if (slots_[at].value != kEmpty) return slots_[at].value;
    std::optional<TensorType> t = infer();
    int32_t id = t ? type_id(*t) : -1;
    if (2 * (used_ + 1) > slots_.size()) {
      if (slots_.size() >= kMaxSlots) {
        // Bounded memory: start over (a result is a pure function of its key).
        std::fill(slots_.begin(), slots_.end(), Slot{});
        used_ = 0;
      } else {
        grow();
      }
      at = find(key);
    }
    slots_[at] = Slot{key, id};
    ++used_;
    return id;
  }

 private:
  // Open addressing with linear probing in a power-of-two table, the keys inline: a lookup is
  // one multiply-shift and, mostly, one cache line. (A node-based std::unordered_map with its
  // modulo and pointer chase was most of the instance search's time.)
  static constexpr int32_t kEmpty = INT32_MIN;
  static constexpr size_t kInitialSlots = size_t{1} << 12;
  // Results a thread holds at most before it starts over: half of 2^19 slots, 16 MiB.
  static constexpr size_t kMaxSlots = size_t{1} << 19;
  struct Slot {
    Key key{};
    int32_t value = kEmpty;
  };
  size_t find(const Key& key) const;  // the key's slot, or the empty one where it would go
  void grow();
  std::vector<Slot> slots_;
  size_t used_ = 0;
  TypeTable types_;
  std::unordered_map<std::string, uint32_t> signature_ids_;
};

// An application without its tensor arguments, with the parameter assignment it is typed
// under: "conv 1 same none _ _|p_act=relu;". Two applications with one signature and the same
// argument types have the same type.
std::string application_signature(const TermPtr& t, const AxiomOp& op,
                                  const ParamAssignment& params);

}  // namespace graphsub::rules
