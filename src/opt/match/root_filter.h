#pragma once
// Where a pattern may match, before any state: the operator, output, arity and literal
// parameters of its root node and of the root's operator arguments. Thousands of rules share
// a root operator (2,238 of the library's sources are conv-rooted), but far fewer share such a
// filter, and a graph node passes few of them. Filters are interned, so GraphIndex keeps one
// candidate list per filter and graph (GraphIndex::candidates), shared by every pattern with
// that filter, instead of each pattern testing every node of its root's operator.
#include <bitset>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ops/op_def.h"

namespace graphsub::opt {

// The stateless test of one pattern node against a graph tensor (see Pattern::node_fits).
struct NodeTest {
  const OpDef* op = nullptr;
  uint32_t output = 0;
  uint32_t arity = 0;
  uint32_t num_params = 0;  // parameters the operator has in the language
  std::vector<std::pair<uint32_t, AxiomParam>> literals;  // (parameter position, value)
};

struct RootFilter {
  NodeTest root;
  std::vector<std::optional<NodeTest>> args;  // per argument: its test, or none (a variable)
  uint32_t root_id = 0;                       // interned id of `root` alone
  uint32_t id = 0;  // interned id of the whole filter (root_id when no argument is tested)
};

// Interns the filter's keys (thread-safe). Ids only index caches; results never depend on them.
RootFilter make_root_filter(NodeTest root, std::vector<std::optional<NodeTest>> args);

// Operators as a set of their positions in all_ops() (sorted by name, so stable).
constexpr size_t kMaxOps = 128;
using OpSet = std::bitset<kMaxOps>;
// The operator's position in all_ops(); throws Error for an operator not in the registry.
size_t op_number(const OpDef* op);

}  // namespace graphsub::opt
