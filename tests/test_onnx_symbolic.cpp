// Symbolic input dimensions: imported at one value, written back symbolic (dim_params,
// Reshape targets with 0 and -1, values that follow them computed at run time), and refused
// with the node named when a graph fixed the value. End to end with PyTorch models and ONNX
// Runtime: test_onnx_torchvision.cpp and the zoo (tests/python/test_zoo_small.py).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "onnx/format/tensor_proto.h"
#include "onnx/onnx_model.h"
#include "ops/op_def.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

using testing::OnnxBuilder;

void make_symbolic(onnx::ValueInfoProto& vi, int dim, const std::string& name) {
  vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(dim)->set_dim_param(name);
}

// x[batch, 3, 4] -> Reshape to [Shape(x)[0], -1] -> Relu, as PyTorch's flatten writes it.
OnnxBuilder flatten_model() {
  OnnxBuilder b(13);
  b.input("x", {1, 3, 4});
  make_symbolic(*b.g().mutable_input(0), 0, "batch");
  b.node("Shape", {"x"}, {"shape"});
  b.init_ints("zero", {0});
  b.node("Gather", {"shape", "zero"}, {"n"});
  b.init_ints("rest", {-1});
  OnnxBuilder::attr(b.node("Concat", {"n", "rest"}, {"target"}), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"r"});
  b.node("Relu", {"r"}, {"y"});
  b.output("y", {1, 12});
  make_symbolic(*b.g().mutable_output(0), 0, "batch");
  return b;
}

TEST(OnnxSymbolic, FlattenIsWrittenWithTheBatchSymbolic) {
  OnnxBuilder b = flatten_model();
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  ASSERT_EQ(m.info->symbolic.size(), 1u);
  EXPECT_EQ(m.info->symbolic[0].name, "batch");
  EXPECT_EQ(m.info->symbolic[0].value, 2);  // graphsub's default value
  ASSERT_EQ(m.alt_graphs.size(), 1u);
  int64_t alt = m.info->symbolic[0].alt;
  EXPECT_EQ(m.alt_graphs[0].type(m.alt_graphs[0].outputs()[0].ref).shape, (Shape{alt, 12}));

  onnx::ModelProto w;
  ASSERT_TRUE(w.ParseFromString(export_onnx_bytes(m.graph, m.info.get())));
  EXPECT_EQ(w.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "batch");
  EXPECT_EQ(w.graph().output(0).type().tensor_type().shape().dim(0).dim_param(), "batch");
  std::vector<int64_t> target;
  for (const auto& n : w.graph().node())
    if (n.op_type() == "Reshape")
      for (const auto& t : w.graph().initializer())
        if (t.name() == n.input(1)) target = tensor_ints(t, t.name());
  EXPECT_EQ(target, (std::vector<int64_t>{0, 12}));  // the batch copied, not baked

  // The written model imports at another batch as the original does.
  ImportOptions at5;
  at5.input_shapes["x"] = {5, 3, 4};
  ImportedModel again = import_onnx_bytes(w.SerializeAsString(), "", at5);
  EXPECT_EQ(again.graph.type(again.graph.outputs()[0].ref).shape, (Shape{5, 12}));
}

// x[batch, 4] + ConstantOfShape(Shape(x)) as zeros: a value evaluated at import whose shape
// follows the batch.
OnnxBuilder zeros_like_model() {
  OnnxBuilder b(13);
  b.input("x", {1, 4});
  make_symbolic(*b.g().mutable_input(0), 0, "batch");
  b.node("Shape", {"x"}, {"shape"});
  b.node("ConstantOfShape", {"shape"}, {"zeros"}, "zeros_like");
  b.node("Add", {"x", "zeros"}, {"y"});
  b.output("y", {1, 4});
  make_symbolic(*b.g().mutable_output(0), 0, "batch");
  return b;
}

TEST(OnnxSymbolic, AValueThatFollowsTheBatchIsComputedAtRunTime) {
  // Evaluated at batch 2, ConstantOfShape would be a [2, 4] weight; it stays a node (with the
  // Shape it reads), so the written model holds at every batch.
  OnnxBuilder b = zeros_like_model();
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  ASSERT_EQ(m.info->symbolic.size(), 1u) << fmt::format("{}", fmt::join(m.summary.notes, "\n"));
  std::set<std::string> opaque;
  for (const auto& o : m.summary.opaque) {
    opaque.insert(o.op_type);
    EXPECT_NE(o.reason.find("symbolic dimension"), std::string::npos) << o.reason;
  }
  EXPECT_EQ(opaque, (std::set<std::string>{"ConstantOfShape", "Shape"}));
  onnx::ModelProto w;
  ASSERT_TRUE(w.ParseFromString(export_onnx_bytes(m.graph, m.info.get())));
  std::set<std::string> ops;
  for (const auto& n : w.graph().node()) ops.insert(n.op_type());
  EXPECT_TRUE(ops.count("ConstantOfShape") && ops.count("Shape"));
  for (const auto& t : w.graph().initializer())
    EXPECT_NE(t.dims_size() == 2 && t.dims(0) == 2, true) << "a weight of the batch: " << t.name();
  ImportOptions at5;
  at5.input_shapes["x"] = {5, 4};
  ImportedModel again = import_onnx_bytes(w.SerializeAsString(), "", at5);
  EXPECT_EQ(again.graph.type(again.graph.outputs()[0].ref).shape, (Shape{5, 4}));
}

TEST(OnnxSymbolic, AnElementwiseSumAtBatchOneBroadcastsAtOtherValues) {
  // At batch 1, x[1, 4] + bias[1, 4] is an elementwise sum of equal shapes; at batch 3 it
  // broadcasts: both are ONNX's Add.
  OnnxBuilder b(13);
  b.input("x", {1, 4});
  make_symbolic(*b.g().mutable_input(0), 0, "batch");
  b.init("bias", {1, 4});
  b.node("Add", {"x", "bias"}, {"y"});
  b.output("y", {1, 4});
  make_symbolic(*b.g().mutable_output(0), 0, "batch");
  ImportOptions at1;
  at1.dim_values["batch"] = 1;
  ImportedModel m = import_onnx_bytes(b.bytes(), "", at1);
  ASSERT_EQ(m.info->symbolic.size(), 1u);
  EXPECT_EQ(m.info->symbolic[0].value, 1);
  Graph alt = instantiate_symbolic(m.graph, *m.info, 0);
  EXPECT_EQ(alt.type(alt.outputs()[0].ref).shape, (Shape{m.info->symbolic[0].alt, 4}));
}

TEST(OnnxSymbolic, ASliceOfEverythingAtTheImportedValueOnlyIsKept) {
  // x[batch, 4]: rows [0, 2) are all of x at batch 2, graphsub's default, and not at the
  // second value; columns [0, 4) are all of x at every batch.
  OnnxBuilder b(13);
  b.input("x", {2, 4});
  make_symbolic(*b.g().mutable_input(0), 0, "batch");
  b.init_ints("zero", {0});
  b.init_ints("two", {2});
  b.init_ints("four", {4});
  b.init_ints("rows", {0});
  b.init_ints("cols", {1});
  b.node("Slice", {"x", "zero", "two", "rows"}, {"first"});
  b.node("Slice", {"first", "zero", "four", "cols"}, {"all"});
  b.node("Relu", {"all"}, {"y"});
  b.output("y", {2, 4});
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  ASSERT_EQ(m.info->symbolic.size(), 1u) << fmt::format("{}", fmt::join(m.summary.notes, "\n"));
  EXPECT_EQ(m.summary.no_ops, 1);
  auto ops = testing::op_counts(m.graph);
  EXPECT_EQ(ops, (std::map<std::string, int>{{"relu", 1}, {"slice", 1}}));
  int64_t alt = m.info->symbolic[0].alt;
  ASSERT_EQ(m.alt_graphs.size(), 1u);
  EXPECT_EQ(m.alt_graphs[0].type(m.alt_graphs[0].outputs()[0].ref).shape, (Shape{2, 4}))
      << "at batch " << alt;
  Graph at_alt = instantiate_symbolic(m.graph, *m.info, 0);
  EXPECT_EQ(at_alt.type(at_alt.outputs()[0].ref).shape, (Shape{2, 4}));
}

TEST(OnnxSymbolic, DimensionValuesAreGivenByNameAndUnknownNamesRefused) {
  OnnxBuilder b = flatten_model();
  ImportOptions at7;
  at7.dim_values["batch"] = 7;
  ImportedModel m = import_onnx_bytes(b.bytes(), "", at7);
  EXPECT_EQ(m.graph.type(m.graph.outputs()[0].ref).shape, (Shape{7, 12}));
  ASSERT_EQ(m.info->symbolic.size(), 1u);
  EXPECT_EQ(m.info->symbolic[0].value, 7);
  ImportOptions wrong;
  wrong.dim_values["seq"] = 7;
  try {
    import_onnx_bytes(b.bytes(), "", wrong);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("'seq'"), std::string::npos) << what;
    EXPECT_NE(what.find("batch"), std::string::npos) << what;
  }
}

TEST(OnnxSymbolic, AGraphThatFixedTheBatchIsRefusedWithTheNodeNamed) {
  // A rewrite that put the batch's value into a weight: the graph is valid at batch 2 only.
  OnnxBuilder b = flatten_model();
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  ASSERT_EQ(m.info->symbolic.size(), 1u);
  Graph g = m.graph;
  TensorRef y = g.outputs()[0].ref;
  NodeId w = g.add_weight("batch_sized", g.type(y),
                          std::make_shared<const std::vector<float>>(numel(g.type(y).shape), 1.f));
  TensorRef sum{g.add(op_def("ewadd"), {y, {w, 0}}, {}, "fixed_sum"), 0};
  g.add_output("fixed", sum);
  try {
    instantiate_symbolic(g, *m.info, 0);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("'batch'"), std::string::npos) << what;
    EXPECT_NE(what.find("fixed_sum"), std::string::npos) << what;
  }
  // Without symbolic dimensions the zeros model imports and exports at its fixed batch.
  ImportOptions fixed;
  fixed.keep_symbolic = false;
  ImportedModel f = import_onnx_bytes(zeros_like_model().bytes(), "", fixed);
  EXPECT_TRUE(f.info->symbolic.empty());
  EXPECT_TRUE(f.summary.opaque.empty());
  EXPECT_NO_THROW(export_onnx_bytes(f.graph, f.info.get()));
}

}  // namespace
}  // namespace graphsub

namespace graphsub {
namespace {

// SigLIP's tanh GELU, x + 0.044715 x^3, on a symbolic batch: a proved rule rewrites
// a + b*a into a * (b + 1) with a ones tensor of a's shape, at the imported batch of 2,
// which holds at that batch only. The job then writes the input as given, and says why,
// instead of failing (it refused hf-siglip-vision whole).
TEST(OnnxSymbolic, ARewriteValidAtTheImportedValueOnlyWritesTheInput) {
  testing::OnnxBuilder b(17);
  b.input("x", {2, 16, 64});
  b.init_floats("k", {0.044715f}, Shape{});
  b.init_floats("c", {0.7978845f}, Shape{});
  b.node("Mul", {"x", "x"}, {"x2"});
  b.node("Mul", {"x", "x2"}, {"x3"});
  b.node("Mul", {"k", "x3"}, {"kx3"});
  b.node("Add", {"x", "kx3"}, {"s"});
  b.node("Mul", {"c", "s"}, {"cs"});
  b.node("Tanh", {"cs"}, {"y"});
  b.output("y", {2, 16, 64});
  for (auto* v : {b.g().mutable_input(0), b.g().mutable_output(0)})
    v->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param(
        "batch");
  std::string dir = testing::scratch_dir("symbolic_bake");
  std::string model = dir + "/gelu_tanh.onnx", out = dir + "/out.onnx", log;
  {
    std::ofstream f(model, std::ios::binary);
    f << b.bytes();
  }
  ASSERT_EQ(
      testing::run_command(fmt::format("{} optimize {} -o {} --target onednn {}",
                                       testing::graphsub_bin(), model, out, testing::kSmallSearch),
                           &log),
      0)
      << log;
  std::ifstream in(out, std::ios::binary);
  std::string written((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(log.find("does not hold at batch=5"), std::string::npos) << log;
  EXPECT_EQ(written, b.bytes()) << log;  // the input, byte for byte
}

// The values are checked on the check's input sets at the import's shapes; at each other
// value of a symbolic dimension one set shows a rewrite that holds at the import's shapes
// only (three took Whisper's encoder 14.8 s at batch 5).
TEST(OnnxSymbolic, OtherValuesOfADimensionAreCheckedOnOneInputSet) {
  OnnxBuilder b = flatten_model();
  std::string dir = testing::scratch_dir("symbolic_once");
  std::string model = dir + "/flatten.onnx", out = dir + "/out.onnx", json = dir + "/r.json", log;
  {
    std::ofstream f(model, std::ios::binary);
    f << b.bytes();
  }
  ASSERT_EQ(testing::run_command(
                fmt::format("{} optimize {} -o {} --target onednn --check 3 --report-json {} {}",
                            testing::graphsub_bin(), model, out, json, testing::kSmallSearch),
                &log),
            0)
      << log;
  std::ifstream in(json);
  nlohmann::json r = nlohmann::json::parse(in);
  EXPECT_EQ(r.at("check").at("runs"), 3) << log;
  const auto& at = r.at("check").at("at_symbolic_values");
  ASSERT_EQ(at.size(), 1u) << at.dump();
  EXPECT_EQ(at.begin()->at("runs"), 1) << at.dump();
}

}  // namespace
}  // namespace graphsub
