#include "rules/inference_cache.h"

#include "rules/term.h"

namespace graphsub::rules {

InferenceCache& InferenceCache::of_thread() {
  static thread_local InferenceCache cache;
  return cache;
}

uint32_t InferenceCache::signature_id(const std::string& signature) {
  return signature_ids_.try_emplace(signature, static_cast<uint32_t>(signature_ids_.size()))
      .first->second;
}

InferenceCache::Key InferenceCache::key_of(uint32_t signature, std::span<const uint64_t> arg_ids) {
  uint64_t a[kMaxTensorArgs] = {};
  for (size_t k = 0; k < arg_ids.size() && k < kMaxTensorArgs; ++k) a[k] = arg_ids[k];
  return Key{uint64_t{signature} << 32 | a[0], a[1] << 32 | a[2], a[3] << 32 | a[4]};
}

size_t InferenceCache::find(const Key& key) const {
  uint64_t h = (key.hi * 0x9E3779B97F4A7C15ull ^ key.lo) * 0xC2B2AE3D27D4EB4Full ^ key.last;
  h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
  const size_t mask = slots_.size() - 1;
  for (size_t at = static_cast<size_t>(h >> 32) & mask;; at = (at + 1) & mask)
    if (slots_[at].value == kEmpty || slots_[at].key == key) return at;
}

void InferenceCache::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  for (const Slot& s : old)
    if (s.value != kEmpty) slots_[find(s.key)] = s;
}

std::string application_signature(const TermPtr& t, const AxiomOp& op,
                                  const ParamAssignment& params) {
  std::string sig = t->name;
  for (size_t i = 0; i < t->args.size(); ++i)
    sig += ' ' + (i < op.num_params() || is_constant_term(t->args[i]) ? term_str(t->args[i])
                                                                      : std::string("_"));
  sig += '|';
  for (auto& [name, value] : params) sig += name + '=' + param_str(value) + ';';
  return sig;
}

}  // namespace graphsub::rules
