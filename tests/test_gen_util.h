#pragma once
// Shared helpers of the generator tests: small search spaces and canonical forms of graphs.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gen/classify/equality.h"
#include "gen/enumerate/compact_graph.h"
#include "gen/space/space.h"
#include "rules/rule_parser.h"

namespace graphsub::gen::testing {

// specs/operators.axioms, loaded once.
inline const rules::RuleSet& shipped_axioms() {
  static const rules::RuleSet a =
      rules::load_rules(std::string(GRAPHSUB_SOURCE_DIR) + "/specs/operators.axioms");
  return a;
}

// An equality of parsed terms, lhs[i] = rhs[i] (not canonicalized).
inline Equality eq(const std::vector<std::string>& lhs, const std::vector<std::string>& rhs) {
  Equality e;
  for (auto& t : lhs) e.lhs.push_back(rules::parse_term(t));
  for (auto& t : rhs) e.rhs.push_back(rules::parse_term(t));
  e.lhs_ops = count_ops(e.lhs);
  e.rhs_ops = count_ops(e.rhs);
  return e;
}

// The domains declared in specs/operators.axioms (kept small where a test wants speed).
inline ParamDomains small_domains() {
  ParamDomains d;
  d["stride"] = {int64_t{1}};
  d["padding"] = {std::string("same")};
  d["act"] = {std::string("none"), std::string("relu")};
  d["kernel"] = {int64_t{3}};
  d["axis"] = {int64_t{0}, int64_t{1}};
  return d;
}

inline std::vector<PoolTensor> matrix_pool() {
  return {{"x1", {2, 4}, Role::Data}, {"x2", {2, 4}, Role::Data}, {"w1", {4, 4}, Role::Weight}};
}

inline Space make_test_space(const std::vector<std::string>& ops, std::vector<PoolTensor> pool,
                             int max_ops, ParamDomains d = small_domains()) {
  return make_space(make_variants(ops, d, pool), std::move(pool), max_ops, 7);
}

// A canonical text of a graph that does not depend on the order of its operators: each
// tensor is written as its whole expression; commutative operators sort their operands.
inline std::string tensor_text(const Space& s, const CompactGraph& g, TensorId t) {
  size_t p = s.num_pool();
  if (is_pool_id(p, t)) return s.pool[t].name;
  const GraphOp& op = g.ops[static_cast<size_t>(producer_of(p, t))];
  const GenOp& v = s.variants[op.variant];
  std::vector<std::string> args;
  for (int i = 0; i < v.arity; ++i)
    args.push_back(tensor_text(s, g, op.in[static_cast<size_t>(i)]));
  if (v.commutative) std::sort(args.begin(), args.end());
  std::string out = "(" + v.label();
  for (auto& a : args) out += " " + a;
  return out + ")#" + std::to_string(output_index_of(p, t));
}

inline std::string graph_text(const Space& s, const CompactGraph& g) {
  if (g.num_ops == 0) return s.pool[g.bare].name;
  std::vector<std::string> ops;
  for (int k = 0; k < g.num_ops; ++k)
    ops.push_back(tensor_text(s, g, op_output_id(s.num_pool(), k, 0)));
  std::sort(ops.begin(), ops.end());
  std::string out;
  for (auto& o : ops) out += o + " ";
  return out;
}

}  // namespace graphsub::gen::testing
