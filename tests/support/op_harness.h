#pragma once
// Helpers for operator tests: run one operator on given values through a real Graph and the
// reference executor, infer its types, and capture the error message of a rejected node.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "exec/host_tensor.h"
#include "ir/graph.h"

namespace graphsub::testutil {

TensorType f32(Shape s);

// Output types of `op` on inputs of the given types (through Graph::add); throws on error.
std::vector<TensorType> infer(std::string_view op, const std::vector<TensorType>& ins,
                              Attrs attrs = {});
std::vector<TensorType> infer(std::string_view op, const std::vector<Shape>& ins, Attrs attrs = {});
// The error message Graph::add gives for this node, or "" when it is accepted.
std::string infer_error(std::string_view op, const std::vector<Shape>& ins, Attrs attrs = {});

// Runs `op` on the given values (inputs named in0, in1, ...); one tensor per operator output.
template <class T>
std::vector<HostTensor<T>> run_op(std::string_view op, const std::vector<HostTensor<T>>& ins,
                                  Attrs attrs = {});

// Seeded random tensors: floats uniform in [-1, 1), uint32 uniform over all values.
HostTensor<float> random_f32(const Shape& s, std::mt19937& rng);
HostTensor<uint32_t> random_u32(const Shape& s, std::mt19937& rng);

// Row-major flat index of a multi-index.
int64_t flat_index(const Shape& s, const std::vector<int64_t>& idx);
// Calls f(idx) for every multi-index of `s` in row-major order.
template <class F>
void for_each_index(const Shape& s, F f) {
  int64_t n = numel(s);
  std::vector<int64_t> idx(s.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(idx);
    for (int64_t d = static_cast<int64_t>(s.size()) - 1; d >= 0; --d) {
      if (++idx[d] < s[d]) break;
      idx[d] = 0;
    }
  }
}

// EXPECT_TRUE(contains(message, "[2,3]")): passes when `text` holds `part`, else shows both.
::testing::AssertionResult contains(const std::string& text, const std::string& part);

// Largest |a-b| relative to max(1, |b|); infinity when shapes differ.
double max_rel_error(const HostTensor<float>& a, const HostTensor<float>& b);

}  // namespace graphsub::testutil
