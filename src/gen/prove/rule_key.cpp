#include "gen/prove/rule_key.h"

#include <xxhash.h>

namespace graphsub::gen {

RuleKey rule_key(std::string_view key_text) {
  XXH128_hash_t h = XXH3_128bits(key_text.data(), key_text.size());
  return {h.low64, h.high64};
}

}  // namespace graphsub::gen
