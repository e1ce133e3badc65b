#pragma once
// A rule's source as a pattern over the IR: one node per distinct subterm (equal subterms
// denote one value, so they must match one tensor), tensor variables as leaves, operator
// nodes with literal or variable parameters. Matching binds tensor variables to tensors and
// parameter variables to values (OpDef::attrs_to_params of the matched node), honours the
// rule's constraints, maps distinct source outputs to distinct tensors, and refuses matches
// where a tensor computed inside the pattern is read outside it other than as a mapped output.
// A match's vars are per tensor variable (tensor_vars()), its params per parameter variable,
// its outputs per source output.
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/graph.h"
#include "opt/match/graph_index.h"
#include "opt/match/match.h"
#include "rules/rule.h"

namespace graphsub::opt {

struct PatternNode {
  bool is_var = false;
  int var = -1;                     // tensor variable index (is_var)
  const OpDef* op = nullptr;        // operator nodes
  uint32_t output = 0;              // which output of the IR node the term denotes
  std::vector<AxiomParam> literal;  // per parameter: its value when literal...
  std::vector<int> param_var;       // ...or the parameter variable index (-1: literal)
  std::vector<int> inputs;          // pattern node indices of the tensor arguments
};

class Pattern {
 public:
  // Throws Error (naming the rule) when the source uses an unknown operator or is a bare
  // variable.
  explicit Pattern(const rules::Rule& rule);

  // Matches find() returns at most on a graph with `slots` node slots. A pattern of one root
  // has at most one match per node; patterns of several roots that share nothing (a rule over
  // two independent operators) match every pair of nodes, quadratic in the graph's size; past
  // this limit the first ones in find()'s order are kept, so matching stays linear.
  static size_t match_limit(size_t slots) { return slots + 4096; }

  // Every match in the graph, in a deterministic order (ascending root node ids), at most
  // match_limit(graph slots).
  std::vector<Match> find(const GraphIndex& ix) const;
  // The same matches written into out[0..n), n returned. Match objects already in `out` are
  // overwritten in place (their vectors keep their storage), so a caller that keeps `out`
  // across calls matches without allocating; entries past n are left as they were.
  size_t find(const GraphIndex& ix, std::vector<Match>& out) const;
  // False when the graph lacks an operator the pattern needs, so find() would find nothing.
  bool possible(const GraphIndex& ix) const;

  const std::vector<std::string>& tensor_vars() const { return tensor_vars_; }
  const std::vector<std::string>& param_vars() const { return param_vars_; }

 private:
  struct State;
  struct Scratch;  // per-thread buffers of find() (scratch_pool.h)
  int compile(const rules::TermPtr& t, std::vector<std::string>& keys);
  bool bind(int p, TensorRef t, State& s, const GraphIndex& ix) const;
  // Whether graph tensor t has the pattern node's operator, output, arity and literal
  // parameters (its parameter variables are bind()'s business).
  bool node_fits(const PatternNode& pn, TensorRef t, const GraphIndex& ix) const;
  NodeTest node_test(const PatternNode& pn) const;
  // What bind() checks that needs no state: operators, outputs, arities and literal parameters
  // of the pattern below p. False means bind() would fail; true promises nothing.
  bool could_bind(int p, TensorRef t, const GraphIndex& ix) const;
  bool complete(State& s, const GraphIndex& ix, Scratch& sc) const;
  // sc.states[root] is the match so far; sc.states[root + 1] is scratch for the next level
  // (reused across candidates: assigning a state keeps the vectors' storage). Matches go to
  // out[count++].
  void extend(size_t root, Scratch& sc, const GraphIndex& ix, std::vector<Match>& out,
              size_t& count) const;
  // Candidate tensors for root `root` given the match so far, ascending, into `cands`.
  void root_candidates(size_t root, const State& s, const GraphIndex& ix, Scratch& sc,
                       std::vector<TensorRef>& cands) const;

  // interchangeable_[i] for root i > 0: roots i-1 and i are the same pattern up to renaming
  // the variables only they use, so a match and its mirror image (those roots swapped) are the
  // same rewrite; only the match with ascending tensors is kept.
  std::vector<uint8_t> interchangeable_;
  std::string rule_name_;
  std::vector<rules::TermPtr> constraints_;
  std::vector<PatternNode> nodes_;        // children before parents
  std::vector<int> roots_;                // per source output
  OpSet ops_;                             // operators of the pattern
  std::vector<RootFilter> root_filters_;  // per root: its candidates when nothing is fixed
  std::vector<std::string> tensor_vars_, param_vars_;
};

}  // namespace graphsub::opt
