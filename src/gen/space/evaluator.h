#pragma once
// Applies generator operator variants to typed tensors with the operators' own reference
// kernels. Types are interned to small ids and every (variant, input types) combination is
// resolved once (attributes, output types, or "does not apply"), so that the enumerator's inner
// loop only runs kernels. One Evaluator per thread: it is not thread-safe.
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/tensor_type.h"
#include "gen/space/flat_map.h"
#include "gen/space/gen_op.h"

namespace graphsub::gen {

using TypeId = uint16_t;

class TypeTable {
 public:
  TypeId intern(const TensorType& t);
  const TensorType& type(TypeId id) const { return types_[id]; }
  uint64_t hash(TypeId id) const { return hashes_[id]; }
  int64_t numel(TypeId id) const { return numels_[id]; }
  size_t size() const { return types_.size(); }

 private:
  std::deque<TensorType> types_;  // stable addresses
  std::vector<uint64_t> hashes_;
  std::vector<int64_t> numels_;
  std::unordered_multimap<uint64_t, TypeId> by_hash_;
};

// The resolved application of one variant to inputs of given types.
struct Applied {
  bool ok = false;
  int num_out = 0;
  TypeId out[kMaxOutputs] = {0, 0};
  Attrs attrs;
  std::vector<TensorType> in_types, out_types;
};

class Evaluator {
 public:
  // `alt`: constants take their sizes for the re-test pool (GenOp::alt_const_attrs).
  explicit Evaluator(const std::vector<GenOp>& variants, bool alt = false)
      : variants_(variants), alt_(alt) {}

  TypeTable& types() { return types_; }
  const std::vector<GenOp>& variants() const { return variants_; }

  // Resolves variant `v` on inputs of types `in` (size = arity). Never throws for a
  // combination the operator rejects: returns ok = false.
  const Applied& apply(uint32_t v, std::span<const TypeId> in);

  // Runs the reference kernel: outputs are written to `out` (sized by the caller from the
  // output types' element counts).
  template <class T>
  void run(uint32_t v, const Applied& a, std::span<const T* const> in,
           std::span<T* const> out) const;

 private:
  const std::vector<GenOp>& variants_;
  bool alt_;
  const Applied& resolve(uint32_t v, std::span<const TypeId> in);
  // True when, at these sizes, the outputs do not depend on one of the inputs: attention over
  // a single key ignores its queries, softmax or a normalization over an axis of one element
  // ignores its input. Such an application is a coincidence of the pool's sizes: every graph
  // through it equals every graph with another tensor in that input, none of those equalities
  // holds in general, and at N = 3 over every operator their pairs outgrew the machine. The
  // enumerator does not apply it (the re-test pool, whose sizes of 1 stay 1, would not catch
  // them). Checked by running the kernel on other fillings of each input.
  bool ignores_an_input(uint32_t v, const Applied& a) const;

  TypeTable types_;
  // Resolved applications by (variant, first input type): a row indexed by the second input
  // type + 1 (0 for fewer inputs), holding index + 1 into applied_ (0: not resolved yet). The
  // enumerator tries one variant and first input against every second input in turn, so its
  // lookups walk along one short row instead of missing the caches in a large hash table.
  FlatMap64 rows_;
  std::deque<std::vector<uint32_t>> row_data_;
  // Applications of more than two inputs (few variants): index into applied_ by the variant
  // and the input types.
  using WideKey = std::array<uint32_t, kMaxArity + 1>;
  std::map<WideKey, uint32_t> wide_;
  std::deque<Applied> applied_;
};

}  // namespace graphsub::gen
