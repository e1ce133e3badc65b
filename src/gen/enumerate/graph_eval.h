#pragma once
// Evaluates one compact graph from scratch on the pool's values, in wrap-around integers (for
// the hashes of each output, which map outputs between the two sides of a rule) and in float
// (for the numerical re-test).
#include <cstdint>
#include <vector>

#include "gen/enumerate/compact_graph.h"
#include "gen/enumerate/float_memo.h"
#include "gen/space/evaluator.h"

namespace graphsub::gen {

struct EvaluatedGraph {
  bool ok = false;                      // every operator applied (always, for enumerated graphs)
  std::vector<TensorId> outputs;        // graph_outputs() order
  std::vector<uint64_t> output_hashes;  // exact value hash of each output
  std::vector<std::vector<float>> output_f32;
  std::vector<uint64_t> all_hashes;  // every tensor the graph computes (pool excluded)
};

class GraphEvaluator {
 public:
  // `alt`: on the re-test pool (other sizes, other values) instead of the fingerprint pool.
  // `memo_terms`: subterms the float memo holds before it starts over (0: none, every float
  // value is computed).
  explicit GraphEvaluator(const Space& s, bool alt = false,
                          size_t memo_terms = FloatMemo::kDefaultTerms);
  // Float values (`with_float`) come through a memo of subterms. Without `exact` (float values
  // wanted only: the re-test) the wrap-around integer values are not computed and every hash
  // is 0; with neither, the result is not ok.
  EvaluatedGraph evaluate(const CompactGraph& g, bool with_float, bool exact = true);
  Evaluator& evaluator() { return ev_; }
  const FloatMemo& float_memo() const { return memo_; }
  // Exact value hash of a pool tensor, and its float values.
  uint64_t pool_hash(size_t p) const { return pool_hashes_[p]; }
  const std::vector<float>& pool_f32(size_t p) const {
    return alt_ ? s_.alt_f32[p] : s_.pool_f32[p];
  }

 private:
  EvaluatedGraph evaluate_exact(const CompactGraph& g);
  EvaluatedGraph evaluate_float(const CompactGraph& g);

  const Space& s_;
  bool alt_;
  Evaluator ev_;
  std::vector<TypeId> pool_types_;
  std::vector<uint64_t> pool_hashes_;
  FloatMemo memo_;
  // Scratch of evaluate_float, by tensor id.
  std::vector<TypeId> types_;
  std::vector<const float*> values_;
  std::vector<uint32_t> terms_;
};

}  // namespace graphsub::gen
