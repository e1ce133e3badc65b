// The Graph IR: adding nodes, validation errors, topological order, copy-on-write edits,
// dead-code removal and compaction, out-of-order construction with infer_all, the builder.
#include <gtest/gtest.h>

#include "core/error.h"
#include "exec/reference_executor.h"
#include "ir/builder.h"
#include "ir/print.h"
#include "support/op_harness.h"

namespace graphsub {
namespace {

using testutil::contains;
using testutil::f32;
using Ints = std::vector<int64_t>;

std::string validate_error(const Graph& g) {
  try {
    validate(g);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// x -> relu -> ewadd(relu, y) -> output
struct Small {
  Graph g;
  NodeId x, y, relu, add;
  Small() {
    x = g.add_input("x", f32({2, 3}));
    y = g.add_input("y", f32({2, 3}));
    relu = g.add("relu", {{x, 0}});
    add = g.add("ewadd", {{relu, 0}, {y, 0}});
    g.add_output("out", {add, 0});
  }
};

TEST(IrGraph, AddInfersTypesAndNormalisesAttributes) {
  Graph g;
  auto x = g.add_input("x", f32({1, 3, 8, 8}));
  auto w = g.add_weight("w", f32({4, 3, 3, 3}));
  auto c = g.add("conv", {{x, 0}, {w, 0}}, {{"pads", Ints{1, 1, 1, 1}}}, "conv1");
  EXPECT_EQ(g.node(c).outputs.at(0), f32({1, 4, 8, 8}));
  EXPECT_EQ(g.node(c).attrs.str(), "act=none dilations=[1,1] pads=[1,1,1,1] stride=[1,1]");
  EXPECT_EQ(g.node(c).name, "conv1");
  EXPECT_EQ(g.num_nodes(), 3u);
  EXPECT_EQ(g.num_ops(), 1u);
  EXPECT_EQ(g.inputs(), std::vector<NodeId>{x});
  EXPECT_EQ(g.weights(), std::vector<NodeId>{w});
  EXPECT_TRUE(g.node(x).is_input());
  EXPECT_TRUE(g.node(w).is_weight());
}

TEST(IrGraph, AddRejectsBadNodesWithClearMessages) {
  Graph g;
  auto x = g.add_input("x", f32({2, 3}));
  auto y = g.add_input("y", f32({3, 2}));
  try {
    g.add("ewadd", {{x, 0}, {y, 0}}, {}, "sum");
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "ewadd 'sum' (inputs f32[2,3], f32[3,2])"));
    EXPECT_TRUE(contains(e.what(), "differ"));
  }
  try {
    g.add("relu", {{7, 0}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "missing tensor 7:0"));
  }
  try {
    g.add("nosuchop", {{x, 0}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "unknown operator 'nosuchop'"));
  }
  EXPECT_THROW(g.add_output("o", {x, 1}), Error);
  EXPECT_THROW(g.add_weight("w", f32({2, 2}), std::make_shared<const std::vector<float>>(3, 0.f)),
               Error);
  EXPECT_EQ(g.num_nodes(), 2u);  // failed adds leave nothing behind
}

TEST(IrGraph, ValidateAcceptsAGoodGraph) {
  Small s;
  EXPECT_EQ(validate_error(s.g), "");
}

TEST(IrGraph, ValidateReportsShapeMismatch) {
  Small s;
  s.g.set_output_type({s.y, 0}, f32({2, 4}));  // an input whose shape no longer fits
  std::string e = validate_error(s.g);
  EXPECT_TRUE(contains(e, "node 3"));
  EXPECT_TRUE(contains(e, "ewadd"));
  EXPECT_TRUE(contains(e, "f32[2,4]"));
  EXPECT_TRUE(contains(e, "f32[2,3]"));
}

TEST(IrGraph, ValidateReportsStoredTypesThatDifferFromInferred) {
  Small s;
  TensorType t = f32({2, 3});
  t.layout = Layout::ColMajor;
  s.g.set_output_type({s.add, 0}, t);
  EXPECT_TRUE(contains(validate_error(s.g), "stored output types f32[2,3]@colmajor differ"));
}

TEST(IrGraph, ValidateReportsWrongArity) {
  Small s;
  s.g.set_inputs(s.relu, {{s.x, 0}, {s.y, 0}});
  std::string e = validate_error(s.g);
  EXPECT_TRUE(contains(e, "relu takes 1 inputs, got 2"));
  EXPECT_TRUE(contains(e, "node 2"));
}

TEST(IrGraph, ValidateReportsBadAttribute) {
  Graph g;
  auto x = g.add_input("x", f32({2, 3}));
  auto c = g.add_unchecked(op_def("concat"), {{x, 0}}, {{"axis", std::string("one")}}, "", 1);
  g.add_output("o", {c, 0});
  std::string e = validate_error(g);
  EXPECT_TRUE(contains(e, "concat attribute 'axis' must be int"));
  Graph h;
  auto y = h.add_input("y", f32({2, 3}));
  auto t = h.add_unchecked(op_def("tanh"), {{y, 0}}, {{"bogus", 1}}, "", 1);
  h.add_output("o", {t, 0});
  EXPECT_TRUE(contains(validate_error(h), "tanh has no attribute 'bogus'"));
}

TEST(IrGraph, ValidateReportsCycle) {
  Small s;
  s.g.set_inputs(s.relu, {{s.add, 0}});
  std::string e = validate_error(s.g);
  EXPECT_TRUE(contains(e, "cycle"));
  EXPECT_THROW(s.g.topo_order(), Error);
  EXPECT_THROW(s.g.infer_all(), Error);
}

TEST(IrGraph, ValidateReportsDanglingTensors) {
  Small s;
  s.g.remove(s.relu);
  std::string e = validate_error(s.g);
  EXPECT_TRUE(contains(e, "dangling tensor 2:0"));
  Small t;
  t.g.set_inputs(t.relu, {{t.x, 3}});
  EXPECT_TRUE(contains(validate_error(t.g), "dangling tensor 0:3"));
  Small u;
  u.g.remove(u.add);
  EXPECT_TRUE(contains(validate_error(u.g), "graph output 'out' refers to dangling tensor 3:0"));
}

TEST(IrGraph, ValidateReportsDuplicateNames) {
  Small s;
  s.g.add_input("x", f32({1}));
  EXPECT_TRUE(contains(validate_error(s.g), "duplicate input/weight name 'x'"));
  Small t;
  t.g.add_output("out", {t.relu, 0});
  EXPECT_TRUE(contains(validate_error(t.g), "duplicate graph output name 'out'"));
}

TEST(IrGraph, TopoOrderIsDeterministicAndRespectsEdges) {
  // Nodes added out of order: consumers before producers.
  Graph g;
  auto x = g.add_input("x", f32({2, 2}));
  auto late = g.add_unchecked(op_def("relu"), {{2, 0}}, {}, "", 1);  // reads node 2
  auto early = g.add_unchecked(op_def("tanh"), {{x, 0}}, {}, "", 1);
  auto other = g.add_unchecked(op_def("sigmoid"), {{x, 0}}, {}, "", 1);
  ASSERT_EQ(early, 2u);
  g.add_output("o", {late, 0});
  g.add_output("p", {other, 0});
  auto order = g.topo_order();
  EXPECT_EQ(order, (std::vector<NodeId>{x, early, late, other}));
  EXPECT_EQ(g.topo_order(), order);
  // infer_all fills the types in that order.
  g.infer_all();
  EXPECT_EQ(g.type({late, 0}), f32({2, 2}));
  EXPECT_EQ(validate_error(g), "");
  auto cons = g.consumers();
  EXPECT_EQ(cons[x], (std::vector<NodeId>{early, other}));
  EXPECT_EQ(cons[early], std::vector<NodeId>{late});
}

TEST(IrGraph, InferAllReportsErrorsNamingTheNode) {
  Graph g;
  auto x = g.add_input("x", f32({2, 3}));
  auto m = g.add_unchecked(op_def("matmul"), {{x, 0}, {x, 0}}, {}, "mm", 1);
  g.add_output("o", {m, 0});
  try {
    g.infer_all();
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "node 1 'mm' (matmul, inputs f32[2,3] f32[2,3])"));
    EXPECT_TRUE(contains(e.what(), "inner sizes"));
  }
}

TEST(IrGraph, CopiesShareNodesUntilEdited) {
  Small s;
  Graph copy = s.g;
  std::string before = to_text(s.g);
  EXPECT_EQ(&copy.node(s.relu), &s.g.node(s.relu));  // shared, not cloned
  copy.set_inputs(s.add, {{s.y, 0}, {s.relu, 0}});
  copy.set_output_type({s.x, 0}, f32({2, 3}));
  copy.replace_uses({s.relu, 0}, {s.x, 0});
  copy.remove(s.relu);
  EXPECT_EQ(to_text(s.g), before);
  EXPECT_TRUE(s.g.alive(s.relu));
  EXPECT_EQ(s.g.node(s.add).inputs, (std::vector<TensorRef>{{s.relu, 0}, {s.y, 0}}));
  EXPECT_EQ(copy.node(s.add).inputs, (std::vector<TensorRef>{{s.y, 0}, {s.x, 0}}));
  EXPECT_NE(&copy.node(s.add), &s.g.node(s.add));
  EXPECT_EQ(&copy.node(s.y), &s.g.node(s.y));  // untouched nodes stay shared
  EXPECT_EQ(validate_error(copy), "");
}

TEST(IrGraph, ReplaceUsesRewiresNodesAndOutputs) {
  Small s;
  auto t = s.g.add("tanh", {{s.add, 0}});
  s.g.replace_uses({s.add, 0}, {s.relu, 0});
  EXPECT_EQ(s.g.node(t).inputs[0], (TensorRef{s.relu, 0}));
  EXPECT_EQ(s.g.outputs()[0].ref, (TensorRef{s.relu, 0}));
}

TEST(IrGraph, RemoveDeadAndCompact) {
  Small s;
  auto w = s.g.add_weight("unused_w", f32({2, 3}));
  auto dead = s.g.add("tanh", {{s.relu, 0}});
  auto dead2 = s.g.add("ewmul", {{dead, 0}, {w, 0}});
  auto unused_input = s.g.add_input("z", f32({1}));
  s.g.remove_dead();
  EXPECT_FALSE(s.g.alive(dead));
  EXPECT_FALSE(s.g.alive(dead2));
  EXPECT_FALSE(s.g.alive(w));            // dead weights go
  EXPECT_TRUE(s.g.alive(unused_input));  // graph inputs stay: they are the interface
  EXPECT_EQ(s.g.num_slots(), 8u);
  std::string text = to_text(s.g);
  s.g.compact();
  EXPECT_EQ(s.g.num_slots(), s.g.num_nodes());
  EXPECT_EQ(s.g.num_nodes(), 5u);
  EXPECT_EQ(to_text(s.g), text);
  EXPECT_EQ(validate_error(s.g), "");
  // Compact numbers nodes in topological order.
  auto order = s.g.topo_order();
  for (NodeId i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);
  EXPECT_EQ(s.g.node(s.g.outputs()[0].ref.node).op->name, "ewadd");
}

TEST(IrGraph, RemoveDeadToleratesDanglingReferences) {
  Small s;
  s.g.remove(s.relu);
  s.g.remove_dead();  // must not crash; validate() reports the problem
  EXPECT_TRUE(contains(validate_error(s.g), "dangling tensor 2:0"));
}

TEST(IrGraph, OpaqueNodesKeepTheirGivenTypes) {
  Graph g;
  auto x = g.add_input("x", f32({2, 3}));
  auto o = g.add_opaque("NonMaxSuppression", {{x, 0}}, {f32({5}), f32({1})}, {{"iou", 0.5}});
  g.add_output("a", {o, 1});
  EXPECT_EQ(validate_error(g), "");
  g.infer_all();  // leaves opaque types alone
  EXPECT_EQ(g.type({o, 0}), f32({5}));
  EXPECT_TRUE(contains(g.describe(o), "opaque:NonMaxSuppression"));
  try {
    run_reference<float>(g, random_feeds(g, 1));
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "no reference kernel"));
  }
}

TEST(IrGraph, BuilderBuildsValidExecutableGraphs) {
  GraphBuilder b(true, 5);
  auto x = b.input("x", {1, 3, 8, 8});
  auto c = b.conv(x, b.weight("w", {4, 3, 3, 3}), {.stride = 2, .pad = 1, .act = "relu"});
  EXPECT_EQ(b.shape(c), (Shape{1, 4, 4, 4}));
  auto bn = b.batchnorm(c, "bn");
  auto p = b.poolavg(bn, {.kernel = 2});
  auto m = b.poolmax(bn, {.kernel = 3, .stride = 1, .pad = 1});
  EXPECT_EQ(b.shape(p), (Shape{1, 4, 2, 2}));
  EXPECT_EQ(b.shape(m), (Shape{1, 4, 4, 4}));
  auto flat = b.reshape(p, {1, 16});
  auto cat = b.concat(1, {flat, flat});
  auto parts = b.op_multi("split", {cat}, {{"axis", 1}});
  EXPECT_EQ(parts.size(), 2u);
  auto y = b.softmax(b.matmul(parts[1], b.weight("fc", {16, 5}), "tanh"));
  b.output("y", y);
  b.output("t", b.transpose(m, {0, 2, 3, 1}));
  Graph g = b.finish();
  EXPECT_EQ(g.weights().size(), 6u);  // w, 4 batchnorm parameters, fc
  auto out = run_reference<float>(g, random_feeds(g, 1));
  ASSERT_EQ(out.size(), 2u);
  double sum = 0;
  for (float v : out[0].data) sum += v;
  EXPECT_NEAR(sum, 1.0, 1e-5);
  EXPECT_EQ(out[1].shape, (Shape{1, 4, 4, 4}));
  // Batchnorm variances are positive; weights are deterministic per seed and name.
  for (NodeId id : g.weights())
    if (g.node(id).name == "bn.var") {
      for (float v : *g.node(id).data) EXPECT_GT(v, 0.f);
    }
  GraphBuilder same(true, 5), other(true, 6);
  auto w1 = same.weight("w", {4, 3, 3, 3}), w2 = other.weight("w", {4, 3, 3, 3});
  EXPECT_EQ(*same.graph().node(w1.node).data, *g.node(g.weights()[0]).data);
  EXPECT_NE(*other.graph().node(w2.node).data, *g.node(g.weights()[0]).data);
  GraphBuilder shapes_only(false);
  EXPECT_EQ(shapes_only.graph().node(shapes_only.weight("w", {2}).node).data, nullptr);
}

TEST(IrGraph, BuilderReportsErrors) {
  GraphBuilder b;
  auto x = b.input("x", {1, 3, 8, 8});
  EXPECT_THROW(b.conv(x, b.weight("w", {4, 2, 3, 3})), Error);
  b.output("x", x);
  b.output("x", x);
  EXPECT_THROW(b.finish(), Error);  // duplicate output name
}

}  // namespace
}  // namespace graphsub
