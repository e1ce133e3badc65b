#pragma once
// One rank's classification as bytes (a shard file of the run directory): its counts and its
// classes, each by canonical key with its candidate counts and shape conditions.
#include <string>

#include "gen/classify/classify.h"

namespace graphsub::gen {

std::string classified_bytes(const Classified& c);
// `what` names the file in errors.
Classified classified_from_bytes(const std::string& bytes, const std::string& what);

}  // namespace graphsub::gen
