// Text and DOT views of a graph, and the printing of attributes and tensor types they use.
#include <gtest/gtest.h>

#include "ir/print.h"
#include "support/op_harness.h"

namespace graphsub {
namespace {

using testutil::contains;
using testutil::f32;
using Ints = std::vector<int64_t>;

Graph sample() {
  Graph g;
  auto x = g.add_input("x", f32({2, 3}));
  auto w = g.add_weight("w", f32({3, 4}), std::make_shared<const std::vector<float>>(12, 0.5f));
  auto m = g.add("matmul", {{x, 0}, {w, 0}}, {{"act", std::string("relu")}});
  auto c = g.add("concat", {{m, 0}, {m, 0}}, {{"axis", 1}});
  auto s = g.add("split", {{c, 0}}, {{"axis", 1}});
  auto o = g.add_opaque("Custom", {{s, 1}}, {f32({2, 4})});
  g.add_output("y", {s, 0});
  g.add_output("z", {o, 0});
  return g;
}

TEST(IrPrint, TextListsNodesInTopologicalOrder) {
  EXPECT_EQ(to_text(sample()),
            "input x: f32[2,3]\n"
            "weight w: f32[3,4] (data)\n"
            "%0 = matmul(x, w) act=relu -> f32[2,4]\n"
            "%1 = concat(%0, %0) axis=1 -> f32[2,8]{split1:4}\n"
            "%2 = split(%1) axis=1 sizes=[] -> f32[2,4], f32[2,4]\n"
            "%3 = opaque:Custom(%2#1) domain= op_type=Custom -> f32[2,4]\n"
            "output y = %2#0\n"
            "output z = %3\n");
}

TEST(IrPrint, DotHasNodesEdgesAndOutputs) {
  std::string dot = to_dot(sample(), "my \"graph\"");
  EXPECT_TRUE(contains(dot, "digraph \"my \\\"graph\\\"\" {"));
  EXPECT_TRUE(contains(dot, "n0 [shape=ellipse, label=\"x\\nf32[2,3]\"];"));
  EXPECT_TRUE(contains(dot, "n1 [shape=note, label=\"w\\nf32[3,4]\"];"));
  EXPECT_TRUE(contains(dot, "n2 [shape=box, label=\"matmul\\nact=relu\"];"));
  EXPECT_TRUE(contains(dot, "n0 -> n2 [label=\"f32[2,3]\"];"));
  EXPECT_TRUE(contains(dot, "n2 -> n3 [label=\"f32[2,4]\"];"));
  EXPECT_TRUE(contains(dot, "label=\"opaque:Custom\\n"));
  EXPECT_TRUE(contains(dot, "out0 [shape=doublecircle, label=\"y\"];\n  n4 -> out0;"));
  EXPECT_TRUE(contains(dot, "n5 -> out1;"));
  EXPECT_EQ(dot.substr(dot.size() - 2), "}\n");
  EXPECT_EQ(dot, to_dot(sample(), "my \"graph\""));  // deterministic
}

TEST(IrPrint, TypesAndAttributes) {
  TensorType t = f32({1, 8});
  t.layout = Layout::NHWC;
  auto inner = std::make_shared<SplitTree>(SplitTree{2, nullptr, nullptr});
  t.set_split(1, std::make_shared<SplitTree>(SplitTree{3, inner, nullptr}));
  EXPECT_EQ(t.str(), "f32[1,8]@nhwc{split1:(2 3 )}");
  TensorType s;
  s.dtype = DType::U32;
  EXPECT_EQ(s.str(), "u32[]");
  Attrs a{{"z", 1}, {"a", Ints{1, 2}}, {"m", 0.5}, {"s", std::string("same")}};
  EXPECT_EQ(a.str(), "a=[1,2] m=0.5 s=same z=1");  // sorted by name
  a.erase("m");
  EXPECT_EQ(a.str(), "a=[1,2] s=same z=1");
}

}  // namespace
}  // namespace graphsub
