// conv_add(x, w, y [, b]) = act(conv(x, w [, b]) + y): its types are the conv's, its residual
// must have them, and its reference kernel equals conv, ewadd and the activation run one after
// another, for float and for wrap-around uint32 (exactly, in both: the same operations in the
// same order).
#include <gtest/gtest.h>

#include "core/error.h"
#include "ops/op_def.h"
#include "support/op_harness.h"

namespace graphsub {
namespace {

using testutil::contains;
using testutil::infer;
using testutil::infer_error;
using testutil::run_op;
using Ints = std::vector<int64_t>;

TEST(OpsConvAdd, TypesAreTheConvolutions) {
  Attrs a{{"stride", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  for (bool bias : {false, true}) {
    std::vector<Shape> conv_in{{1, 4, 9, 9}, {6, 2, 3, 3}};
    if (bias) conv_in.push_back({6});
    Shape out = infer("conv", conv_in, a).at(0).shape;
    EXPECT_EQ(out, (Shape{1, 6, 5, 5}));
    std::vector<Shape> in{conv_in[0], conv_in[1], out};
    if (bias) in.push_back({6});
    EXPECT_EQ(infer("conv_add", in, a).at(0).shape, out);
  }
  std::string e = infer_error("conv_add", {{1, 4, 9, 9}, {6, 4, 3, 3}, {1, 6, 9, 9}});
  EXPECT_TRUE(contains(e, "residual f32[1,6,9,9]"));
  EXPECT_TRUE(contains(e, "f32[1,6,7,7]"));
  EXPECT_TRUE(contains(infer_error("conv_add", {{1, 4, 9, 9}, {6, 4, 3, 3}}), "3"));
  EXPECT_TRUE(contains(infer_error("conv_add", {{1, 4, 9, 9}, {6, 4, 1, 1}, {1, 6, 9, 9}, {5}}),
                       "bias must be [6]"));
  // Not in the axiom language: the generator and the rules never see it.
  EXPECT_TRUE(op_def("conv_add").axiom_name.empty());
}

// conv_add against conv -> ewadd -> activation on the same values.
template <class T, class Random>
void expect_unfused_equal(Random random) {
  std::mt19937 rng(11);
  Attrs conv{{"stride", Ints{1, 2}}, {"pads", Ints{1, 0, 1, 2}}, {"dilations", Ints{1, 2}}};
  for (const char* act : {"none", "relu", "sigmoid", "tanh"}) {
    for (bool bias : {false, true}) {
      std::vector<HostTensor<T>> in{random(Shape{2, 4, 7, 8}, rng), random(Shape{6, 2, 3, 3}, rng)};
      if (bias) in.push_back(random(Shape{6}, rng));
      HostTensor<T> c = run_op<T>("conv", in, conv).at(0);
      HostTensor<T> y = random(c.shape, rng);
      HostTensor<T> want = run_op<T>("ewadd", {c, y}).at(0);
      if (std::string(act) != "none") want = run_op<T>(act, {want}).at(0);
      std::vector<HostTensor<T>> fused_in{in[0], in[1], y};
      if (bias) fused_in.push_back(in[2]);
      Attrs a = conv;
      a.set("act", std::string(act));
      HostTensor<T> got = run_op<T>("conv_add", fused_in, a).at(0);
      EXPECT_EQ(got.shape, want.shape);
      EXPECT_EQ(got.data, want.data) << act << (bias ? " with bias" : "");
    }
  }
}

TEST(OpsConvAdd, KernelEqualsConvThenAddThenActivationF32) {
  expect_unfused_equal<float>(testutil::random_f32);
}

TEST(OpsConvAdd, KernelEqualsConvThenAddThenActivationU32) {
  expect_unfused_equal<uint32_t>(testutil::random_u32);
}

TEST(OpsConvAdd, CostIsTheConvolutionsPlusTheResidual) {
  const OpDef& fused = op_def("conv_add");
  const OpDef& conv = op_def("conv");
  Attrs a = normalize_attrs(conv, {{"act", std::string("relu")}});
  std::vector<TensorType> in{testutil::f32({1, 8, 6, 6}), testutil::f32({8, 8, 3, 3})};
  auto out = conv.infer(a, in);
  OpCost c = op_cost(conv, a, in, out);
  in.push_back(out[0]);
  OpCost f = op_cost(fused, normalize_attrs(fused, a), in, out);
  double outputs = static_cast<double>(out[0].numel());
  EXPECT_DOUBLE_EQ(f.bytes, c.bytes + 4 * outputs);
  EXPECT_DOUBLE_EQ(f.flops, c.flops + outputs);
}

}  // namespace
}  // namespace graphsub
