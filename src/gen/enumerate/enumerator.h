#pragma once
// Depth-first enumeration of every acyclic graph of up to max_ops operators over the pool
// (TASO's Algorithm 1), with incremental fingerprints: each new operator runs once, in exact
// wrap-around arithmetic, on its inputs' cached values.
//
// Each graph (set of operators) is produced exactly once: operators are added in the graph's
// canonical topological order, the one that always places the smallest available operator
// (by variant id, then input tensor ids) first. Appending operator x keeps that order exactly
// when every operator placed after the last one x reads is smaller than x.
//
// Pruned: graphs that compute one value twice (two tensors with equal values), operators that
// read a tensor equal to a pool tensor (such a tensor may only be an output: transpose of
// transpose of x), graphs whose operators fall into pieces that the remaining operators cannot
// connect. Emitted: connected graphs (operators linked through the tensors they pass) whose
// outputs are all computed values or all equal to pool tensors, and not all computed from
// weights alone (those are pre-computed before run time, so no rule about them pays).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "gen/enumerate/compact_graph.h"
#include "gen/enumerate/leaf_memo.h"
#include "gen/space/evaluator.h"

namespace graphsub::gen {

// A graph with several outputs each block of which some smaller graph computes: the pieces
// of a disconnected partner (resolved once every graph is known).
struct SplitRequest {
  CompactGraph g;
  std::array<uint8_t, 2 * kMaxOps> blocks{};  // block label of each output (graph_outputs order)
};

// Fingerprints of the graphs that may be pieces of a disconnected partner, each with the
// operator count of its smallest graph: a hash table, and at N = 5 the graphs of 4 operators
// (340 M, 6 GB more as hash slots on every rank) found by binary search in their sorted
// packed array, which every rank holds anyway.
class FingerprintSet {
 public:
  // The operator count of the smallest piece with fingerprint `fp`, or null.
  const uint32_t* find(uint64_t fp) const {
    if (const uint32_t* ops = hashed.find(fp)) return ops;
    if (!sorted || sorted->empty()) return nullptr;
    auto it = std::lower_bound(sorted->begin(), sorted->end(), fp,
                               [](const PackedGraph& g, uint64_t f) { return g.fp < f; });
    return it != sorted->end() && it->fp == fp ? &sorted_ops : nullptr;
  }
  FlatMap64 hashed;  // every piece not in `sorted`
  const std::vector<PackedGraph>* sorted = nullptr;
  uint32_t sorted_ops = 0;  // the operator count of the graphs in `sorted`
};

// The representative of a value (Space::minimal_reads): the fewest operators that compute it,
// and among computations of that size the smallest term key (a hash of the operator variant,
// the output index and the input values' hashes, so that computations differing only in how
// an input value is computed share it).
// Packed to 12 bytes: millions are held on every rank (ValueReps).
#pragma pack(push, 4)
struct ValueRep {
  uint32_t ops = 0;
  uint64_t term = 0;
  friend bool operator<(const ValueRep& a, const ValueRep& b) {
    return a.ops != b.ops ? a.ops < b.ops : a.term < b.term;
  }
};
#pragma pack(pop)
// Representatives by value hash.
using ValueReps = FlatMap<ValueRep>;
// Keeps the smaller representative of the value `hash`.
void keep_smaller_rep(ValueReps& reps, uint64_t hash, const ValueRep& r);
// Keeps the smaller representative of each value.
void merge_reps(ValueReps& into, const ValueReps& from);

// Where an Enumerator puts the graphs and split requests it finds.
class GraphSink {
 public:
  virtual ~GraphSink() = default;
  virtual void add(const GraphRecord& r) = 0;
  virtual void add_request(const SplitRequest& q) = 0;
};

// A sink that appends to two vectors.
class VectorSink : public GraphSink {
 public:
  std::vector<GraphRecord> records;
  std::vector<SplitRequest> requests;
  void add(const GraphRecord& r) override { records.push_back(r); }
  void add_request(const SplitRequest& q) override { requests.push_back(q); }
};

// The tensors an operator application reads, kNoTensor past its arity.
using Inputs = std::array<TensorId, kMaxArity>;

// A first operator application: the unit of parallel work.
struct RootTask {
  uint16_t variant = 0;
  Inputs in = kNoInputs;
};

struct EnumStats {
  uint64_t graphs = 0;       // emitted
  uint64_t states = 0;       // operator applications that survived every check
  uint64_t kernel_runs = 0;  // reference kernel invocations (the rest hit the leaf memo)
  uint64_t requests = 0;     // split requests
  // Values found not their own representative (so never read): of operators before the
  // last, and outputs of the last operator computed from part of the graph.
  uint64_t redundant = 0;
  // Graphs not emitted: an output computed from part of the graph is not its representative.
  uint64_t unrepresentative = 0;
  EnumStats& operator+=(const EnumStats& o) {
    graphs += o.graphs;
    redundant += o.redundant;
    unrepresentative += o.unrepresentative;
    requests += o.requests;
    states += o.states;
    kernel_runs += o.kernel_runs;
    return *this;
  }
};

class Enumerator {
 public:
  // Emits graphs of at least `min_emit_ops` operators. With `pieces`, multi-output graphs
  // whose outputs split into blocks that all have fingerprints in `pieces` are also reported
  // as SplitRequests.
  //
  // With `prefix_variables`, graphs of max_ops operators use the pool tensors of each class
  // (same shape and role) as a prefix: x1, or x1 and x2, never x2 alone. Any rule with such a
  // graph on one side can be renamed so that this holds (its other side then uses a subset),
  // so nothing is lost but renamed copies; smaller graphs are kept whole, as pieces.
  Enumerator(const Space& s, int min_emit_ops = 1, const FingerprintSet* pieces = nullptr,
             bool prefix_variables = false);

  // Records the representative of every value computed from at most `max_ops` operators (the
  // round of smaller graphs).
  void collect_reps(ValueReps* into, int max_ops = kMaxOps) {
    collect_ = into;
    collect_max_ops_ = static_cast<uint32_t>(max_ops);
  }
  // No operator reads a value that is not its own representative in `reps`; such values may
  // still be outputs, but of a graph with several outputs only when computed from all of it.
  // Values not in `reps` are read freely.
  void read_only_reps(const ValueReps* reps) { reps_ = reps; }

  // Split requests whose partner would have more operators than this are not made (default:
  // the space's max_ops; more when enumerating the smaller graphs of a larger space).
  void limit_partners(int max_ops) { partner_max_ops_ = static_cast<uint32_t>(max_ops); }

  // Every valid first operator, in search order.
  std::vector<RootTask> root_tasks();
  // Gives every graph whose first operator is `task` to `out`.
  void run_task(const RootTask& task, GraphSink& out);
  const EnumStats& stats() const { return stats_; }

 private:
  struct Slot {
    TypeId type = 0;
    bool weight_only = false;  // computed only from weights, constants and scalars
    bool pool = false;
    bool pool_weight = false;
    bool terminal = false;   // equal to a pool tensor
    bool redundant = false;  // not its own representative (read_only_reps): never read
    uint8_t cone = 0;        // the operators it is computed from, as a bit set
    uint64_t term = 0;       // its term key (ValueRep)
    int8_t producer = -1;
    int32_t constant = -1;  // the constant variant that produced it, or -1
    uint64_t hash = 0;
    const uint32_t* data = nullptr;
  };

  template <class Visit>
  void for_each_application(Visit&& visit);
  bool readable(TensorId t, uint16_t reader, int slot) const;
  // Distinct components of the operator graph whose outputs `in` reads.
  int components_read(const Inputs& in) const;
  bool push(uint16_t v, const Inputs& ins);
  bool leaf_admissible(const GenOp& op, const Inputs& ins) const;
  void pop();
  void emit();
  void expand();

  const Space& s_;
  Evaluator ev_;
  LeafMemo memo_;
  size_t p_;
  std::vector<Slot> slots_;
  std::vector<uint8_t> readers_;
  std::vector<TensorId> live_;
  std::vector<uint8_t> const_ok_;          // [reader variant][slot][constant variant]
  std::vector<uint64_t> class_pred_mask_;  // previous pool tensor of the same class, as a bit
  std::vector<uint8_t> uses_;              // reads of each pool tensor
  uint64_t used_pool_ = 0;                 // pool tensors read, as bits (with prefix_variables)
  bool prefix_variables_;
  // Components one operator can join beyond its own (its most inputs, less one; at least 1).
  int join_;
  int depth_ = 0;
  std::array<GraphOp, kMaxOps> ops_{};
  // order_bound_[d][j]: one more than the largest key (variant, inputs) of operators j..d-1
  // of a graph of d operators, 0 for none (for_each_application).
  std::array<std::array<uint64_t, kMaxOps + 2>, kMaxOps + 1> order_bound_{};
  std::array<size_t, kMaxOps> live_start_{};  // index in live_ of each operator's first output
  std::array<std::array<int8_t, kMaxOps>, kMaxOps + 1> comp_{};
  std::array<int, kMaxOps + 1> num_comps_{};
  std::array<std::array<std::vector<uint32_t>, kMaxOutputs>, kMaxOps> arena_;
  int min_emit_ops_;
  const FingerprintSet* pieces_;
  ValueReps* collect_ = nullptr;
  uint32_t collect_max_ops_ = kMaxOps;
  uint32_t partner_max_ops_;
  const ValueReps* reps_ = nullptr;
  GraphSink* out_ = nullptr;
  EnumStats stats_;
};

}  // namespace graphsub::gen
