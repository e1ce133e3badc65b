#pragma once
// Candidate rules: pairs of graphs with equal fingerprints. Every pair within a bucket is a
// candidate (not only pairs with the first graph seen), and a connected graph with several
// outputs is also paired with the disconnected graph assembled from the smallest graphs that
// compute each block of its outputs.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "gen/enumerate/compact_graph.h"
#include "gen/enumerate/enumerate.h"
#include "gen/enumerate/graph_eval.h"

namespace graphsub::gen {

// One side of a rule: operators plus the outputs that the rule maps, explicitly (an assembled
// side may output several pool tensors, which a CompactGraph alone cannot say).
struct RuleSide {
  CompactGraph g;
  std::vector<TensorId> outputs;
  friend bool operator==(const RuleSide&, const RuleSide&) = default;
};

RuleSide side_of(const Space& s, const CompactGraph& g);

struct Candidate {
  RuleSide a, b;
  // After the numerical re-test: outputs of `a` and `b` that hold equal values, pairwise.
  std::vector<TensorId> a_out, b_out;
};

// The pairs of one bucket: all pairs, except that a bucket holding a bare variable pairs every
// other graph with the variable only (they all equal it; the pairs among them follow), and a
// bucket of graphs whose outputs are several pool tensors forms none (each pairs with those
// tensors through its split request).
std::vector<std::pair<size_t, size_t>> bucket_pairs(const std::vector<GraphRecord>& records,
                                                    const Bucket& b);

// The disconnected partner of a split request: the smallest graph of each block's bucket
// (`small` holds every candidate piece), operators renumbered one
// after another; nullopt when it would exceed max_ops operators or
// compute one value twice (two pieces sharing a subgraph).
std::optional<RuleSide> split_partner(GraphEvaluator& ev, const Space& s, const SmallGraphs& small,
                                      const SplitRequest& q);

// The two single-operator graphs of an alias (the variant and the one it equals).
Candidate alias_candidate(const Space& s, const Alias& a);

// Evaluates a side (operators in order; the outputs are taken from side.outputs).
EvaluatedGraph evaluate_side(GraphEvaluator& ev, const Space& s, const RuleSide& side,
                             bool with_float, bool exact = true);

// The numerical re-test. Outputs are paired by their exact hashes on the fingerprint pool (ev);
// both sides are then run in float on the re-test pool (alt: other sizes, other values), must
// apply there, and must agree within a relative tolerance. Fills a_out/b_out on success.
bool float_retest(GraphEvaluator& ev, GraphEvaluator& alt, const Space& s, Candidate& c,
                  double tolerance = 1e-5);
// The same on sides already evaluated: e* on the fingerprint pool, f* in float on the re-test
// pool.
bool float_retest(const EvaluatedGraph& ea, const EvaluatedGraph& eb, const EvaluatedGraph& fa,
                  const EvaluatedGraph& fb, Candidate& c, double tolerance);

}  // namespace graphsub::gen
