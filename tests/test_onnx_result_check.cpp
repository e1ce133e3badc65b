// The result check's comparison: tolerances scaled by the output's magnitude, NaN and inf
// compared for equality, several runs, and the description of what was compared.
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "onnx/result_check.h"

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
  ResultCheck rc = check_results(g, g, 3);
  EXPECT_TRUE(rc.ok);
  EXPECT_EQ(rc.runs, 3);
  ASSERT_EQ(rc.tensors.size(), 1u);
  EXPECT_EQ(rc.tensors[0].max_abs, 0);
  EXPECT_GT(rc.tensors[0].max_ref, 0.1);
  EXPECT_EQ(rc.scope(), "1 output on 3 random input sets");
}

TEST(ResultCheck, DifferentGraphsFail) {
  ResultCheck rc = check_results(unary("tanh"), unary("sigmoid"), 1);
  EXPECT_FALSE(rc.ok);
  EXPECT_GT(rc.tensors[0].max_abs, 0.1);
}

TEST(ResultCheck, NanMatchesNanOnlyAndIsCounted) {
  // sqrt of inputs in [-1, 1): NaN for the negative half, in both graphs alike.
  ResultCheck same = check_results(unary("sqrt"), unary("sqrt"), 1);
  EXPECT_TRUE(same.ok);
  EXPECT_GT(same.tensors[0].nonfinite, 0);
  // relu first: zeros where the original has NaN.
  ResultCheck differ = check_results(unary("sqrt"), unary("relu", "sqrt"), 1);
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
  EXPECT_TRUE(check_results(ga, gb, 1).ok);
  for (NodeId id : gb.weights()) {
    auto d = std::make_shared<std::vector<float>>(*gb.node(id).data);
    (*d)[0] *= 1.01f;
    gb.set_weight_data(id, d);
  }
  EXPECT_FALSE(check_results(ga, gb, 1).ok);
}

}  // namespace
}  // namespace graphsub
