#pragma once
// From buckets to rule classes: forms the candidate pairs of every bucket (plus disconnected
// partners and aliases), re-tests each numerically, and gathers the passing ones into classes
// equal up to renaming. Streams part by part and bucket by bucket, so memory holds classes,
// not graphs or pairs.
#include <map>
#include <string>

#include "gen/classify/candidates.h"
#include "gen/classify/equality.h"
#include "ir/report.h"

namespace graphsub::gen {

// A class, kept by its canonical key only (equality_from_key rebuilds its terms): at max_ops 4
// there are millions of them.
struct ClassAcc {
  uint64_t pairs = 0;  // candidates that fell into this class
  // Of which were larger candidates reduced into it (reduce_common_subgraphs): they are not
  // tried in their own, specific form.
  uint64_t reduced = 0;
  // The shape conditions (shape_conditions, in the class's variables) that held in every
  // candidate of the class: the conditions to retry under if the equality is not proved.
  std::vector<rules::TermPtr> shape_conds;
};

struct Classified {
  std::map<std::string, ClassAcc> classes;  // by canonical key
  uint64_t buckets = 0;                     // fingerprints shared by two or more graphs
  uint64_t shared_graphs = 0;               // graphs in those buckets
  uint64_t pairs = 0;                       // candidate pairs formed
  uint64_t passed = 0;                      // of which passed the re-test
  uint64_t reduced = 0;                     // of those, classified in a reduced (more general) form
  uint64_t vanished = 0;    // of those, reduced to nothing (identical sides once reduced)
  uint64_t parts_done = 0;  // fingerprint ranges classified
};

struct ClassifyOptions {
  int threads = 2;
  double tolerance = 1e-5;
  // Candidates with a side of at least this many operators are classified in their reduced
  // form (reduce_common_subgraphs: common input subgraphs become variables, common output
  // operators are peeled off), so that they land in the classes of smaller rules instead of
  // becoming classes of their own. At max_ops 3 none is reduced (the shipped library's
  // policy: there the pruning after proving keeps a specific rule whose general form fails).
  int reduce_from_ops = 4;
  // Debug and measurement: classify only the first this many fingerprint ranges (of
  // num_parts()) and the same share of the split requests (the first ones); 0: all. Aliases
  // are classified either way.
  size_t max_parts = 0;
  // One rank's share: every ranks-th item (fingerprint range, split request, alias) from
  // `rank` on. The union of the shares, merged, is the whole classification.
  int rank = 0, ranks = 1;
};

// Adds the classes and counts of `from` to `into` (order-independent: the shape conditions of
// a class are those common to both sides).
void merge_classified(Classified& into, Classified from);

// Takes the parts of `en` one at a time (each thread its own part), so memory holds the
// buckets of a part, not all of them.
Classified classify_candidates(const Space& s, EnumerationResult& en, const ClassifyOptions& opts,
                               Reporter& rep);

}  // namespace graphsub::gen
