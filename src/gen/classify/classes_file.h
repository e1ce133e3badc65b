#pragma once
// One rank's classification as bytes (a shard file of the run directory): its counts and its
// classes, each by canonical key with its candidate counts and shape conditions.
#include <functional>
#include <string>
#include <string_view>

#include "gen/classify/classify.h"
#include "gen/shard_files.h"

namespace graphsub::gen {

std::string classified_bytes(const Classified& c);
// The same bytes, after what `w` holds already.
void put_classified(ByteWriter& w, const Classified& c);
// `what` names the file in errors; `keep` (when given) chooses the classes kept (the counts
// are the shard's whole).
Classified classified_from_bytes(std::string_view bytes, const std::string& what,
                                 const std::function<bool(const std::string&)>& keep = {});

}  // namespace graphsub::gen
