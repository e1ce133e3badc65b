// The one equivalence check and its one tolerance: the absolute part scaled by the output's
// magnitude (never below atol), NaN and inf compared for equality, several runs, and the
// description of what was compared.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "check/equivalence.h"
#include "ir/builder.h"
#include "core/error.h"

namespace graphsub {
namespace {

Graph unary(const char* first, const char* second = nullptr) {
  GraphBuilder b;
  TensorRef t = b.op(first, {b.input("x", {4, 8})});
  if (second) t = b.op(second, {t});
  b.output("y", t);
  return b.finish();
}

TEST(ResultCheck, EqualGraphsPassOnEveryRun) {
  Graph g = unary("tanh");
  ResultCheck rc = check_equivalent(g, g, {.runs = 3});
  EXPECT_TRUE(rc.ok);
  EXPECT_EQ(rc.runs, 3);
  ASSERT_EQ(rc.tensors.size(), 1u);
  EXPECT_EQ(rc.tensors[0].max_abs, 0);
  EXPECT_GT(rc.tensors[0].max_ref, 0.1);
  EXPECT_EQ(rc.scope(), "1 output on 3 random input sets");
}

TEST(ResultCheck, DifferentGraphsFail) {
  ResultCheck rc = check_equivalent(unary("tanh"), unary("sigmoid"), {.runs = 1});
  EXPECT_FALSE(rc.ok);
  EXPECT_GT(rc.tensors[0].max_abs, 0.1);
}

TEST(ResultCheck, NanMatchesNanOnlyAndIsCounted) {
  // sqrt of inputs in [-1, 1): NaN for the negative half, in both graphs alike.
  ResultCheck same = check_equivalent(unary("sqrt"), unary("sqrt"), {.runs = 1});
  EXPECT_TRUE(same.ok);
  EXPECT_GT(same.tensors[0].nonfinite, 0);
  // relu first: zeros where the original has NaN.
  ResultCheck differ = check_equivalent(unary("sqrt"), unary("relu", "sqrt"));
  EXPECT_FALSE(differ.ok);
}

TEST(ResultCheck, ToleranceScalesWithMagnitude) {
  GraphBuilder a, b;
  auto x = a.input("x", {16});
  a.output("y", a.op("smul", {x, a.weight("k", {})}));
  Graph ga = a.finish();
  // The same computation with the scalar perturbed by 1e-6 relative: within rtol 1e-4.
  Graph gb = ga;
  for (NodeId id : gb.weights()) {
    auto d = std::make_shared<std::vector<float>>(*gb.node(id).data);
    (*d)[0] *= 1.000001f;
    gb.set_weight_data(id, d);
  }
  EXPECT_TRUE(check_equivalent(ga, gb, {.runs = 1}).ok);
  for (NodeId id : gb.weights()) {
    auto d = std::make_shared<std::vector<float>>(*gb.node(id).data);
    (*d)[0] *= 1.01f;
    gb.set_weight_data(id, d);
  }
  EXPECT_FALSE(check_equivalent(ga, gb, {.runs = 1}).ok);
}

HostTensor<float> tensor(std::vector<float> v) {
  return {{static_cast<int64_t>(v.size())}, std::move(v)};
}

TEST(Tolerance, AbsolutePartNeverFallsBelowAtol) {
  // Values of 0.01: the absolute tolerance stays atol (1e-5), not 1e-5 * 0.01.
  Tolerance t{.rtol = 0, .atol = 1e-5};
  EXPECT_TRUE(compare(tensor({0.01f + 0.8e-5f, 0}), tensor({0.01f, 0}), t).ok);
  EXPECT_FALSE(compare(tensor({0.01f + 1.3e-5f, 0}), tensor({0.01f, 0}), t).ok);
}

TEST(Tolerance, AbsolutePartScalesWithTheLargestReferenceValue) {
  // The tensor's largest value is 100: every element may differ by 1e-3, also the zero.
  Tolerance t{.rtol = 0, .atol = 1e-5};
  EXPECT_TRUE(compare(tensor({100, 0.8e-3f}), tensor({100, 0}), t).ok);
  Difference d = compare(tensor({100, 1.2e-3f}), tensor({100, 0}), t);
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.max_ref, 100);
  EXPECT_NEAR(d.max_abs, 1.2e-3, 1e-9);
}

TEST(Tolerance, RelativePartFollowsEachReferenceElement) {
  Tolerance t{.rtol = 1e-4, .atol = 0};
  EXPECT_TRUE(compare(tensor({50.004f}), tensor({50}), t).ok);
  EXPECT_FALSE(compare(tensor({50.006f}), tensor({50}), t).ok);
}

TEST(Tolerance, NonFiniteValuesAgreeOnlyWithTheSameValue) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Difference same = compare(tensor({inf, nan, 1}), tensor({inf, nan, 1}), {});
  EXPECT_TRUE(same.ok);
  EXPECT_EQ(same.nonfinite, 2);
  EXPECT_EQ(same.max_ref, 1);  // the largest finite value
  EXPECT_FALSE(compare(tensor({-inf, nan, 1}), tensor({inf, nan, 1}), {}).ok);
  EXPECT_FALSE(compare(tensor({inf, 0, 1}), tensor({inf, nan, 1}), {}).ok);
  EXPECT_FALSE(compare(tensor({1e30f}), tensor({inf}), {.rtol = 1, .atol = 1}).ok);
}

TEST(Tolerance, DifferentShapesNeverAgree) {
  HostTensor<float> a{{2, 2}, {1, 2, 3, 4}}, b{{4}, {1, 2, 3, 4}};
  Difference d = compare(a, b, {.rtol = 1, .atol = 1});
  EXPECT_FALSE(d.ok);
  EXPECT_TRUE(std::isinf(d.max_abs));
}

TEST(ResultCheck, FailureNamesTheTensorAndTheTolerance) {
  ResultCheck rc = check_equivalent(unary("tanh"), unary("sigmoid"),
                                    {.tolerance = {.rtol = 2e-4, .atol = 3e-5}});
  ASSERT_FALSE(rc.ok);
  EXPECT_EQ(rc.max_abs(), rc.tensors[0].max_abs);
  std::string f = rc.failure();
  EXPECT_NE(f.find("output 'y' differs"), std::string::npos) << f;
  EXPECT_NE(f.find("rtol 0.0002, atol 3e-05"), std::string::npos) << f;
  EXPECT_EQ(check_equivalent(unary("tanh"), unary("tanh")).failure(), "");
}

TEST(ResultCheck, BothExecutorsGiveTheSameVerdict) {
  for (CheckExecutor ex : {CheckExecutor::Reference, CheckExecutor::Onednn}) {
    EXPECT_TRUE(check_equivalent(unary("tanh"), unary("tanh"), {.executor = ex}).ok);
    EXPECT_FALSE(check_equivalent(unary("tanh"), unary("sigmoid"), {.executor = ex}).ok);
  }
}

TEST(ResultCheck, GraphsWithDifferentOutputsOrNoRunsAreRefused) {
  GraphBuilder b;
  auto x = b.input("x", {4, 8});
  b.output("y", b.op("tanh", {x}));
  b.output("z", b.op("relu", {x}));
  EXPECT_THROW(check_equivalent(unary("tanh"), b.finish()), Error);
  EXPECT_THROW(check_equivalent(unary("tanh"), unary("tanh"), {.runs = 0}), Error);
}

}  // namespace
}  // namespace graphsub
