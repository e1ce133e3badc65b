// Exactness of the uint32 instantiation: operator properties from the axiom set hold bit for
// bit in wrap-around arithmetic (which is what lets the generator compare fingerprints), and a
// false equality is told apart. Each case builds both sides in one graph over shared inputs.
#include <gtest/gtest.h>

#include "exec/reference_executor.h"
#include "ir/builder.h"
#include "support/op_harness.h"

namespace graphsub {
namespace {

using Ints = std::vector<int64_t>;

struct Sides {
  GraphBuilder b{false};
  TensorRef in(const std::string& name, Shape s) { return b.input(name, std::move(s)); }
  TensorRef op(std::string_view op, std::vector<TensorRef> ins, Attrs a = {}) {
    return b.op(op, std::move(ins), std::move(a));
  }
  // Evaluates lhs and rhs on the same random inputs (uint32, then float); true when equal.
  bool equal_u32(TensorRef lhs, TensorRef rhs, uint64_t seed = 7) {
    Graph g = graph(lhs, rhs);
    auto out = run_reference<uint32_t>(g, random_feeds_u32(g, seed));
    return out[0].shape == out[1].shape && out[0].data == out[1].data;
  }
  double f32_error(TensorRef lhs, TensorRef rhs) {
    Graph g = graph(lhs, rhs);
    auto out = run_reference<float>(g, random_feeds(g, 3));
    return testutil::max_rel_error(out[0], out[1]);
  }
  Graph graph(TensorRef lhs, TensorRef rhs) {
    Graph g = b.graph();
    g.add_output("lhs", lhs);
    g.add_output("rhs", rhs);
    return g;
  }
};

Attrs conv_attrs(int64_t s, int64_t p, const char* act = "none") {
  return {{"stride", Ints{s, s}}, {"pads", Ints{p, p, p, p}}, {"act", std::string(act)}};
}

TEST(OpsIdentities, ConvWithCpoolIsPoolavg) {
  for (int64_t k : {1, 2, 3, 5})
    for (int64_t s : {1, 2})
      for (int64_t p : {int64_t{0}, (k - 1) / 2}) {
        Sides t;
        auto x = t.in("x", {2, 3, 7, 6});
        auto cpool = t.op("const_pool", {}, {{"channels", 3}, {"kernel", Ints{k, k}}});
        auto lhs = t.op("conv", {x, cpool}, conv_attrs(s, p));
        auto rhs =
            t.op("poolavg", {x},
                 {{"kernel", Ints{k, k}}, {"stride", Ints{s, s}}, {"pads", Ints{p, p, p, p}}});
        EXPECT_TRUE(t.equal_u32(lhs, rhs)) << "k=" << k << " s=" << s << " p=" << p;
        EXPECT_LT(t.f32_error(lhs, rhs), 1e-5);
      }
}

TEST(OpsIdentities, ConvWithIconvIsIdentity) {
  for (int64_t k : {1, 3, 5}) {
    Sides t;
    auto x = t.in("x", {2, 4, 5, 6});
    auto iconv = t.op("const_iconv", {}, {{"channels", 4}, {"kernel", Ints{k, k}}});
    auto lhs = t.op("conv", {x, iconv}, conv_attrs(1, (k - 1) / 2));
    EXPECT_TRUE(t.equal_u32(lhs, x)) << k;
    EXPECT_EQ(t.f32_error(lhs, x), 0);
  }
}

TEST(OpsIdentities, ImatmulAndIewmulAreIdentities) {
  Sides t;
  auto x = t.in("x", {3, 5});
  auto mm = t.op("matmul", {x, t.op("const_imatmul", {}, {{"n", 5}})});
  auto ew = t.op("ewmul", {x, t.op("const_iewmul", {}, {{"shape", Ints{3, 5}}})});
  EXPECT_TRUE(t.equal_u32(mm, x));
  EXPECT_TRUE(t.equal_u32(ew, x));
}

TEST(OpsIdentities, SplitOfConcatGivesTheParts) {
  for (int64_t axis : {0, 1}) {
    Sides t;
    auto x = t.in("x", {2, 3}), y = t.in("y", {2, 3});
    auto parts =
        t.b.op_multi("split", {t.op("concat", {x, y}, {{"axis", axis}})}, {{"axis", axis}});
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_TRUE(t.equal_u32(parts[0], x));
    EXPECT_TRUE(t.equal_u32(parts[1], y));
  }
}

TEST(OpsIdentities, FusedActivationIsActivationAfter) {
  Sides t;
  auto x = t.in("x", {1, 2, 5, 5}), w = t.in("w", {3, 2, 3, 3});
  for (const char* act : {"relu", "sigmoid", "tanh"}) {
    auto fused = t.op("conv", {x, w}, conv_attrs(1, 1, act));
    auto after = t.op(act, {t.op("conv", {x, w}, conv_attrs(1, 1))});
    EXPECT_TRUE(t.equal_u32(fused, after)) << act;
  }
  auto a = t.in("a", {2, 3}), b = t.in("b", {3, 4});
  EXPECT_TRUE(t.equal_u32(t.op("matmul", {a, b}, {{"act", std::string("relu")}}),
                          t.op("relu", {t.op("matmul", {a, b})})));
}

TEST(OpsIdentities, EnlargedKernelGivesTheSameConv) {
  for (auto [k, big] : {std::pair<int64_t, int64_t>{1, 3}, {3, 5}, {1, 5}})
    for (int64_t s : {1, 2}) {
      Sides t;
      auto x = t.in("x", {1, 2, 7, 7}), w = t.in("w", {3, 2, k, k});
      auto lhs = t.op("conv", {x, w}, conv_attrs(s, (k - 1) / 2));
      auto wide = t.op("enlarge", {w}, {{"kernel", Ints{big, big}}});
      auto rhs = t.op("conv", {x, wide}, conv_attrs(s, (big - 1) / 2));
      EXPECT_TRUE(t.equal_u32(lhs, rhs)) << k << "->" << big << " s=" << s;
    }
}

TEST(OpsIdentities, ConcatDistributesOverConvAndMatmul) {
  Sides t;
  auto x = t.in("x", {1, 4, 6, 6}), w1 = t.in("w1", {2, 4, 3, 3}), w2 = t.in("w2", {3, 4, 3, 3});
  auto lhs = t.op("concat",
                  {t.op("conv", {x, w1}, conv_attrs(1, 1, "relu")),
                   t.op("conv", {x, w2}, conv_attrs(1, 1, "relu"))},
                  {{"axis", 1}});
  auto rhs = t.op("conv", {x, t.op("concat", {w1, w2}, {{"axis", 0}})}, conv_attrs(1, 1, "relu"));
  EXPECT_TRUE(t.equal_u32(lhs, rhs));
  // conv(concat(1,x,z), concat(1,y,w)) = ewadd(conv(x,y), conv(z,w))
  auto z = t.in("z", {1, 2, 6, 6}), v = t.in("v", {2, 2, 3, 3});
  auto cat =
      t.op("conv", {t.op("concat", {x, z}, {{"axis", 1}}), t.op("concat", {w1, v}, {{"axis", 1}})},
           conv_attrs(2, 0));
  auto sum = t.op(
      "ewadd", {t.op("conv", {x, w1}, conv_attrs(2, 0)), t.op("conv", {z, v}, conv_attrs(2, 0))});
  EXPECT_TRUE(t.equal_u32(cat, sum));

  auto a = t.in("a", {2, 3}), b = t.in("b", {3, 4}), c = t.in("c", {3, 5});
  EXPECT_TRUE(
      t.equal_u32(t.op("concat", {t.op("matmul", {a, b}), t.op("matmul", {a, c})}, {{"axis", 1}}),
                  t.op("matmul", {a, t.op("concat", {b, c}, {{"axis", 1}})})));
}

TEST(OpsIdentities, MatmulAssociatesAndTransposes) {
  Sides t;
  auto a = t.in("a", {2, 3}), b = t.in("b", {3, 4}), c = t.in("c", {4, 5});
  EXPECT_TRUE(t.equal_u32(t.op("matmul", {t.op("matmul", {a, b}), c}),
                          t.op("matmul", {a, t.op("matmul", {b, c})})));
  EXPECT_TRUE(t.equal_u32(t.op("transpose", {t.op("matmul", {a, b})}),
                          t.op("matmul", {t.op("transpose", {b}), t.op("transpose", {a})})));
  EXPECT_TRUE(t.equal_u32(t.op("transpose", {t.op("transpose", {a})}), a));
}

TEST(OpsIdentities, PoolsCommuteWithConcat) {
  Attrs pool{{"kernel", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  for (const char* op : {"poolavg", "poolmax"})
    for (int64_t axis : {0, 1}) {
      Sides t;
      auto x = t.in("x", {1, 2, 5, 5}), y = t.in("y", {1, 2, 5, 5});
      auto lhs = t.op(op, {t.op("concat", {x, y}, {{"axis", axis}})}, pool);
      auto rhs = t.op("concat", {t.op(op, {x}, pool), t.op(op, {y}, pool)}, {{"axis", axis}});
      EXPECT_TRUE(t.equal_u32(lhs, rhs)) << op << " axis " << axis;
    }
}

TEST(OpsIdentities, FalseEqualitiesAreToldApart) {
  Sides t;
  auto a = t.in("a", {3, 3}), b = t.in("b", {3, 3});
  EXPECT_FALSE(t.equal_u32(t.op("matmul", {a, b}), t.op("matmul", {b, a})));
  EXPECT_FALSE(t.equal_u32(t.op("relu", {t.op("ewadd", {a, b})}),
                           t.op("ewadd", {t.op("relu", {a}), t.op("relu", {b})})));
  auto x = t.in("x", {1, 2, 5, 5}), w = t.in("w", {2, 2, 3, 3});
  EXPECT_FALSE(t.equal_u32(
      t.op("conv", {x, w}, conv_attrs(1, 1)),
      t.op("conv", {x, t.op("transpose", {w}, {{"perm", Ints{0, 1, 3, 2}}})}, conv_attrs(1, 1))));
  // Concat is not associative once split points are tracked: same values, different types.
  auto p = t.in("p", {1, 3}), q = t.in("q", {1, 3}), r = t.in("r", {1, 3});
  auto left = t.op("concat", {t.op("concat", {p, q}, {{"axis", 1}}), r}, {{"axis", 1}});
  auto right = t.op("concat", {p, t.op("concat", {q, r}, {{"axis", 1}})}, {{"axis", 1}});
  EXPECT_TRUE(t.equal_u32(left, right));
  EXPECT_NE(t.b.graph().type(left), t.b.graph().type(right));
}

}  // namespace
}  // namespace graphsub
