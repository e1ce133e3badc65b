// ONNX's Attention as graphsub's `attention` operator (src/ops/attention_ops.cpp): the kernel
// against a loop written here from the definition (grouped-query heads, mask, causal mask, a
// fully masked row), and its shape errors. tests/python/test_fused_ops.py compares it with
// ONNX Runtime's kernel and reads and writes the ONNX node.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_def.h"
#include "support/op_harness.h"

namespace graphsub {
namespace {

using testutil::contains;
using testutil::max_rel_error;
using testutil::random_f32;
using testutil::run_op;

// Y[b,h,i,:] = sum_j softmax_j(scale * q.k_j + mask[b,h,i,j], causal) v_j, with K/V head
// h / (Hq / Hkv); `mask` of the scores' full shape or null.
HostTensor<float> attention_by_hand(const HostTensor<float>& q, const HostTensor<float>& k,
                                    const HostTensor<float>& v, const HostTensor<float>* mask,
                                    double scale, bool causal) {
  int64_t B = q.shape[0], Hq = q.shape[1], S = q.shape[2], D = q.shape[3];
  int64_t Hkv = k.shape[1], L = k.shape[2], Dv = v.shape[3];
  HostTensor<float> y{{B, Hq, S, Dv}, std::vector<float>(static_cast<size_t>(B * Hq * S * Dv))};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      int64_t g = h / (Hq / Hkv);
      for (int64_t i = 0; i < S; ++i) {
        std::vector<double> s(static_cast<size_t>(L));
        double mx = -INFINITY;
        for (int64_t j = 0; j < L; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += q.data[((b * Hq + h) * S + i) * D + d] * k.data[((b * Hkv + g) * L + j) * D + d];
          s[j] = scale * dot + (mask ? mask->data[((b * Hq + h) * S + i) * L + j] : 0.0);
          if (causal && j > i) s[j] = -INFINITY;
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (auto& e : s) sum += (e = std::isinf(mx) ? 0 : std::exp(e - mx));
        for (int64_t j = 0; j < L; ++j)
          for (int64_t d = 0; d < Dv; ++d)
            y.data[((b * Hq + h) * S + i) * Dv + d] += static_cast<float>(
                (sum > 0 ? s[j] / sum : 0) * v.data[((b * Hkv + g) * L + j) * Dv + d]);
      }
    }
  return y;
}

TEST(AttentionOp, GroupedQueryHeadsShareTheirKeyAndValueHead) {
  std::mt19937 rng(3);
  auto q = random_f32({2, 6, 3, 4}, rng), k = random_f32({2, 2, 5, 4}, rng);
  auto v = random_f32({2, 2, 5, 3}, rng);
  auto out = run_op<float>("attention", {q, k, v}, {{"scale", 0.5}});
  ASSERT_EQ(out[0].shape, (Shape{2, 6, 3, 3}));
  EXPECT_LT(max_rel_error(out[0], attention_by_hand(q, k, v, nullptr, 0.5, false)), 1e-5);
}

TEST(AttentionOp, AMaskIsAddedAndTheCausalMaskHidesLaterKeys) {
  std::mt19937 rng(4);
  auto q = random_f32({1, 2, 4, 4}, rng), k = random_f32({1, 2, 6, 4}, rng);
  auto v = random_f32({1, 2, 6, 4}, rng), m = random_f32({1, 2, 4, 6}, rng);
  auto masked = run_op<float>("attention", {q, k, v, m}, {{"scale", 0.5}, {"is_causal", 1}});
  EXPECT_LT(max_rel_error(masked[0], attention_by_hand(q, k, v, &m, 0.5, true)), 1e-5);
  // A mask that broadcasts: one row for every head and query.
  auto row = random_f32({6}, rng);
  HostTensor<float> full{{1, 2, 4, 6}, std::vector<float>(48)};
  for (size_t i = 0; i < full.data.size(); ++i) full.data[i] = row.data[i % 6];
  auto broadcast = run_op<float>("attention", {q, k, v, row}, {{"scale", 1.0}});
  EXPECT_LT(max_rel_error(broadcast[0], attention_by_hand(q, k, v, &full, 1.0, false)), 1e-5);
}

TEST(AttentionOp, AQueryWhoseKeysAreAllMaskedGetsZeros) {
  std::mt19937 rng(5);
  auto q = random_f32({1, 1, 2, 4}, rng), k = random_f32({1, 1, 3, 4}, rng);
  auto v = random_f32({1, 1, 3, 4}, rng);
  HostTensor<float> m{{2, 3}, {-INFINITY, -INFINITY, -INFINITY, 0, 0, 0}};
  auto out = run_op<float>("attention", {q, k, v, m}, {{"scale", 1.0}});
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(out[0].data[d], 0.0f);                 // query 0: every key masked
    EXPECT_TRUE(std::isfinite(out[0].data[4 + d]));  // query 1 attends to all three
  }
}

TEST(AttentionOp, MatricesAreOneBatchAndOneHead) {
  std::mt19937 rng(6);
  auto q = random_f32({3, 4}, rng), k = random_f32({5, 4}, rng), v = random_f32({5, 2}, rng);
  auto out = run_op<float>("attention", {q, k, v}, {{"scale", 1.0}});
  ASSERT_EQ(out[0].shape, (Shape{3, 2}));
  HostTensor<float> q4{{1, 1, 3, 4}, q.data}, k4{{1, 1, 5, 4}, k.data}, v4{{1, 1, 5, 2}, v.data};
  HostTensor<float> want = attention_by_hand(q4, k4, v4, nullptr, 1.0, false);
  EXPECT_LT(
      max_rel_error(HostTensor<float>{{3, 2}, out[0].data}, HostTensor<float>{{3, 2}, want.data}),
      1e-5);
}

// [B, S, H * d] -> [B, H, S, d]
HostTensor<float> heads_of(const HostTensor<float>& x, int64_t h) {
  int64_t B = x.shape[0], S = x.shape[1], d = x.shape[2] / h;
  HostTensor<float> y{{B, h, S, d}, std::vector<float>(x.data.size())};
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t j = 0; j < h * d; ++j)
        y.data[((b * h + j / d) * S + s) * d + j % d] = x.data[(b * S + s) * h * d + j];
  return y;
}

TEST(AttentionOp, TheThreeDimensionalFormSplitsAndMergesTheHeads) {
  std::mt19937 rng(7);
  auto q = random_f32({2, 3, 16}, rng), k = random_f32({2, 5, 8}, rng);
  auto v = random_f32({2, 5, 8}, rng);
  auto out = run_op<float>("attention", {q, k, v},
                           {{"scale", 0.5}, {"q_num_heads", 4}, {"kv_num_heads", 2}});
  ASSERT_EQ(out[0].shape, (Shape{2, 3, 16}));
  HostTensor<float> want =
      attention_by_hand(heads_of(q, 4), heads_of(k, 2), heads_of(v, 2), nullptr, 0.5, false);
  EXPECT_LT(max_rel_error(heads_of(out[0], 4), want), 1e-5);
}

TEST(AttentionOp, OnnxRuntimesMultiHeadAttentionAddsTheBiasThenAttends) {
  std::mt19937 rng(8);
  auto q = random_f32({2, 3, 8}, rng), k = random_f32({2, 4, 8}, rng);
  auto v = random_f32({2, 4, 8}, rng), bias = random_f32({24}, rng);
  auto mha = run_op<float>("ort_mha", {q, k, v, bias}, {{"num_heads", 2}});
  auto add = [&](HostTensor<float> x, int64_t offset) {
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] += bias.data[offset + i % 8];
    return x;
  };
  // scale 0 is 1/sqrt(head size 4)
  auto want = run_op<float>("attention", {add(q, 0), add(k, 8), add(v, 16)},
                            {{"scale", 0.5}, {"q_num_heads", 2}, {"kv_num_heads", 2}});
  EXPECT_LT(max_rel_error(mha[0], want[0]), 1e-6);
  EXPECT_TRUE(contains(
      testutil::infer_error("ort_mha", {{2, 3, 8}, {2, 4, 8}, {2, 4, 8}, {16}}, {{"num_heads", 2}}),
      "bias must be [24]"));
  EXPECT_TRUE(contains(
      testutil::infer_error("ort_mha", {{2, 3, 8}, {2, 4, 8}, {2, 4, 8}}, {{"num_heads", 3}}),
      "3 heads do not divide Q [2,3,8]"));
}

TEST(AttentionOp, OnnxRuntimesPackedAttentionProjectsWithTheWeightsParts) {
  std::mt19937 rng(9);
  auto x = random_f32({2, 3, 6}, rng), w = random_f32({6, 32}, rng), b = random_f32({32}, rng);
  Attrs a{{"num_heads", 2}, {"qkv_hidden_sizes", std::vector<int64_t>{8, 8, 16}}};
  auto packed = run_op<float>("ort_attention", {x, w, b}, a);
  ASSERT_EQ(packed[0].shape, (Shape{2, 3, 16}));
  // x times the weight's columns [from, from + n), as a [2, 3, n] tensor.
  auto project = [&](int64_t from, int64_t n) {
    HostTensor<float> wp{{6, n}, std::vector<float>(static_cast<size_t>(6 * n))};
    for (int64_t r = 0; r < 6; ++r)
      for (int64_t c = 0; c < n; ++c) wp.data[r * n + c] = w.data[r * 32 + from + c];
    HostTensor<float> bp{{n}, std::vector<float>(b.data.begin() + from, b.data.begin() + from + n)};
    return run_op<float>("matmul", {x, wp, bp}, {{"act", std::string("none")}})[0];
  };
  auto want =
      run_op<float>("ort_mha", {project(0, 8), project(8, 8), project(16, 16)}, {{"num_heads", 2}});
  EXPECT_LT(max_rel_error(packed[0], want[0]), 1e-5);
  EXPECT_TRUE(
      contains(testutil::infer_error(
                   "ort_attention", {{2, 3, 6}, {6, 30}},
                   {{"num_heads", 2}, {"qkv_hidden_sizes", std::vector<int64_t>{8, 6, 16}}}),
               "do not split the weight [6,30]"));
  EXPECT_TRUE(
      contains(testutil::infer_error("ort_attention", {{2, 3, 6}, {5, 30}}, {{"num_heads", 2}}),
               "must be [batch, sequence, D]"));
}

TEST(AttentionOp, ShapeErrorsNameTheOperands) {
  Attrs s{{"scale", 1.0}};
  EXPECT_TRUE(
      contains(testutil::infer_error("attention", {{1, 2, 3, 4}, {1, 2, 5, 8}, {1, 2, 5, 4}}, s),
               "Q and K head sizes differ"));
  EXPECT_TRUE(
      contains(testutil::infer_error("attention", {{1, 3, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 4}}, s),
               "not a multiple"));
  EXPECT_TRUE(contains(
      testutil::infer_error("attention", {{1, 2, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 4}, {3, 4}}, s),
      "attention mask: shapes [1,2,3,5] and [3,4] do not broadcast"));
  // A mask that would widen the scores (a batch of 2 against 1).
  EXPECT_TRUE(
      contains(testutil::infer_error("attention",
                                     {{1, 2, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 4}, {2, 1, 3, 5}}, s),
               "does not broadcast to the scores [1,2,3,5]"));
  EXPECT_TRUE(contains(testutil::infer_error("attention", {{2, 3, 4}, {2, 5, 4}, {2, 5, 4}}, s),
                       "rank-3 operands need q_num_heads and kv_num_heads"));
  EXPECT_TRUE(contains(testutil::infer_error("attention", {{2, 3, 4, 1}, {2, 5, 4}, {2, 5, 4}}, s),
                       "must all have rank 4"));
}

// The axiom nan-to-zero-softmax-product (specs/operators.axioms) at the rows where it matters:
// a query whose scores are all -inf, one with a +inf score, one with a NaN score. Each softmax
// row is NaN everywhere or nowhere, so zeroing NaNs before the product with the values or after
// it gives the same, bit for bit. Not so for a matrix with a single NaN: the axiom is about
// softmax rows, not products in general.
TEST(AttentionOp, ZeroingASoftmaxsNanRowsCommutesWithItsProduct) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  HostTensor<float> s{{1, 1, 4, 3},
                      {0.5f, -1, 2,  //
                       -inf, -inf, -inf, 1, inf, 0, 3, nan, -2}};
  std::mt19937 rng(5);
  auto v = random_f32({1, 1, 3, 2}, rng);
  auto p = run_op<float>("softmax", {s}, {{"axis", int64_t{-1}}})[0];
  for (int64_t row = 1; row < 4; ++row)
    for (int64_t j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(p.data[row * 3 + j])) << row << j;
  auto before = run_op<float>("matmul", {run_op<float>("nan_to_zero", {p}, {})[0], v},
                              {{"act", std::string("none")}})[0];
  auto after = run_op<float>(
      "nan_to_zero", {run_op<float>("matmul", {p, v}, {{"act", std::string("none")}})[0]}, {})[0];
  ASSERT_EQ(before.data.size(), after.data.size());
  for (size_t i = 0; i < before.data.size(); ++i) {
    EXPECT_EQ(before.data[i], after.data[i]) << i;
    EXPECT_EQ(before.data[i] == 0, i >= 2) << i;  // the first row attends; the others are zeros
  }
  HostTensor<float> one_nan{{1, 1, 1, 3}, {0.25f, nan, 0.5f}};
  auto zeroed_first = run_op<float>("matmul", {run_op<float>("nan_to_zero", {one_nan}, {})[0], v},
                                    {{"act", std::string("none")}});
  EXPECT_NE(zeroed_first[0].data[0], 0.0f);
}

}  // namespace
}  // namespace graphsub
