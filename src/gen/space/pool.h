#pragma once
// The pool of input tensors the generator builds graphs over. Each pool tensor becomes a tensor
// variable of the rules. Roles restrict where a tensor may be read (as in TASO's generator):
// convolution and pooling read data, the kernel operand of conv reads weights, enlarge reads
// only a weight of the pool itself.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor_type.h"

namespace graphsub::gen {

enum class Role : uint8_t { Data, Weight, Scalar };

struct PoolTensor {
  std::string name;  // variable name in the emitted rules: x1, w1, i1, k1, ...
  Shape shape;
  Role role = Role::Data;
  // Its shape in the numerical re-test of candidate rules; empty: every dimension above 1 one
  // larger (alt_shape). Given where a larger size would break the graphs the pool is for (a
  // hidden axis split into two heads stays even).
  Shape retest_shape;
};

// The default pool (see docs/benchmarks.md, "Generator"): 2x4 matrices x1..x3, 4x4 weights
// w1..w3, 2x2x5x5 images i1..i2, dense 2x2x3x3 kernels k1..k2 and 2x2x1x3 kernels e1..e2, one
// 2x1x3x3 depth-wise kernel d1 and one scalar s1.
std::vector<PoolTensor> default_pool();

// Parses "name:2x4:data,w1:4x4:weight,s:scalar" (a scalar has no shape), a fourth field the
// re-test shape ("q:1x2x4:data:1x3x6"). Throws Error naming the bad entry.
std::vector<PoolTensor> parse_pool(const std::string& spec);
std::string pool_str(const std::vector<PoolTensor>& pool);
// The distinct shapes of `pool`, in order, as tensor types: where every rule generated from it
// type-checks (the verifier's VerifyOptions::fallback_types).
std::vector<TensorType> pool_types(const std::vector<PoolTensor>& pool);

const char* role_name(Role r);

// Seeded pseudo-random values for pool tensor `index`: wrap-around integers for fingerprints,
// floats in [-1, 1) for the numerical re-test. Independent of everything but (seed, index, n).
std::vector<uint32_t> pool_values_u32(uint64_t seed, size_t index, int64_t n);
std::vector<float> pool_values_f32(uint64_t seed, size_t index, int64_t n);

}  // namespace graphsub::gen
