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
