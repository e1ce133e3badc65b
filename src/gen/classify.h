#pragma once
// From buckets to rule classes: forms the candidate pairs of every bucket (plus disconnected
// partners and aliases), re-tests each numerically, and gathers the passing ones into classes
// equal up to renaming. Streams part by part and bucket by bucket, so memory holds classes,
// not graphs or pairs.
#include <map>
#include <string>

#include "gen/candidates.h"
#include "gen/equality.h"
#include "ir/report.h"

namespace graphsub::gen {

struct ClassAcc {
  Equality eq;         // canonical
  uint64_t pairs = 0;  // candidates that fell into this class
  // The density conditions (dense_conv_conditions, in the class's variables) that held in
  // every candidate of the class: the condition to retry under if the equality is false.
  std::vector<rules::TermPtr> dense;
};

struct Classified {
  std::map<std::string, ClassAcc> classes;  // by canonical key
  uint64_t buckets = 0;                     // fingerprints shared by two or more graphs
  uint64_t shared_graphs = 0;               // graphs in those buckets
  uint64_t pairs = 0;                       // candidate pairs formed
  uint64_t passed = 0;                      // of which passed the re-test
};

// Takes the parts of `en` one at a time (each thread its own part), so memory holds the
// buckets of a part, not all of them.
Classified classify_candidates(const Space& s, EnumerationResult& en, int threads, double tolerance,
                               Reporter& rep);

}  // namespace graphsub::gen
