#pragma once
// Everything the enumerator searches over, fixed before it starts: the operator variants, the
// pool of input tensors with their types and seeded values, and the operator count limit.
#include <array>
#include <cstdint>
#include <vector>

#include "gen/space/gen_op.h"
#include "gen/space/pool.h"

namespace graphsub::gen {

constexpr int kMaxOps = 5;    // graphs hold at most this many operators
constexpr int kMaxPool = 40;  // pool tensors (tensor ids must fit a byte)

// Two variants that compute the same function (on every pool input they accept): the higher
// one is left out of the enumeration, and the equality is kept as one candidate.
struct Alias {
  uint32_t variant = 0, same_as = 0;
  std::array<uint8_t, kMaxArity> example = [] {  // pool tensors it was seen on
    std::array<uint8_t, kMaxArity> e{};
    e.fill(0xFF);
    return e;
  }();
};

struct Space {
  std::vector<GenOp> variants;
  std::vector<PoolTensor> pool;
  std::vector<TensorType> pool_types;
  std::vector<std::vector<uint32_t>> pool_u32;  // fingerprint inputs
  std::vector<std::vector<float>> pool_f32;     // float values on the fingerprint shapes
  // The re-test pool: the same tensors with other sizes (alt_shape) and float values.
  std::vector<TensorType> alt_types;
  std::vector<std::vector<uint32_t>> alt_u32;
  std::vector<std::vector<float>> alt_f32;
  std::vector<Alias> aliases;
  int max_ops = 3;
  uint64_t seed = 1;
  // In the round of max_ops operators, an operator reads only values that are their own
  // representative (ValueRep): no smaller graph computes them, and of the computations of
  // that size theirs has the smallest term key. Other values may only be outputs (of a graph
  // with several outputs, only when computed from the whole graph: the other outputs of a
  // split, the sides of multi-output rules such as merged convolutions). A rule that
  // needs one follows from a smaller rule (the value equals its representative) and one among
  // the graphs kept (Ruler's enumeration over class representatives, OOPSLA 2021).
  bool minimal_reads = false;

  size_t num_pool() const { return pool.size(); }
  // The most tensor inputs of any variant (at least 1).
  int max_arity() const;
};

// Builds the space and decides, by testing on the pool's values in exact integer arithmetic,
// which binary variants are commutative and which variants are aliases of lower ones (a 1x1
// max pool and a 1x1 average pool are both a strided copy). Throws Error on a bad
// configuration.
Space make_space(std::vector<GenOp> variants, std::vector<PoolTensor> pool, int max_ops,
                 uint64_t seed);

}  // namespace graphsub::gen
