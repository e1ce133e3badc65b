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

// A grouped-query attention's repeat of the shared heads as exporters write it:
// k[batch, 2, seq, 4] unsqueezed, expanded to [batch, 2, 3, seq, 4] by a target computed
// from Shape(k), merged to [batch, 6, seq, 4]; an input q[1, 1, 4] and a class token (a
// weight) expanded to the batch; z[1] expanded to batch + seq and to batch * seq elements.
OnnxBuilder expands_model() {
  OnnxBuilder b(13);
  b.input("k", {1, 2, 1, 4});
  b.input("z", {1});
  b.input("q", {1, 1, 4});
  make_symbolic(*b.g().mutable_input(0), 0, "batch");
  make_symbolic(*b.g().mutable_input(0), 2, "seq");
  b.node("Shape", {"k"}, {"shape"});
  b.init_ints("i0", {0});
  b.init_ints("i2", {2});
  b.node("Gather", {"shape", "i0"}, {"n"});
  b.node("Gather", {"shape", "i2"}, {"s"});
  for (auto [name, v] : {std::pair{"c1", 1}, {"c2", 2}, {"c3", 3}, {"c4", 4}, {"c6", 6}})
    b.init_ints(name, {v});
  OnnxBuilder::attr(b.node("Concat", {"n", "c2", "c3", "s", "c4"}, {"rep"}), "axis", int64_t{0});
  b.node("Unsqueeze", {"k", "i2"}, {"k5"});
  b.node("Expand", {"k5", "rep"}, {"kx"}, "repeat");
  OnnxBuilder::attr(b.node("Concat", {"n", "c6", "s", "c4"}, {"merged"}), "axis", int64_t{0});
  b.node("Reshape", {"kx", "merged"}, {"kr"});
  b.node("Relu", {"kr"}, {"y"});
  b.init_floats("cls", {0.5f, -1.f, 2.f, 3.f});
  b.g().mutable_initializer()->rbegin()->clear_dims();
  for (int64_t d : {1, 1, 4}) b.g().mutable_initializer()->rbegin()->add_dims(d);
  OnnxBuilder::attr(b.node("Concat", {"n", "c1", "c4"}, {"tok"}), "axis", int64_t{0});
  b.node("Relu", {"q"}, {"q_r"});
  b.node("Expand", {"q_r", "tok"}, {"t"}, "to_batch");
  OnnxBuilder::attr(b.node("Concat", {"n", "c1", "c4"}, {"tok2"}), "axis", int64_t{0});
  b.node("Expand", {"cls", "tok2"}, {"c"}, "class_token");  // its own target: a held one
  b.node("Add", {"n", "s"}, {"sum"});
  b.node("Mul", {"n", "s"}, {"product"});
  b.node("Relu", {"z"}, {"zr"});
  b.node("Expand", {"zr", "sum"}, {"u"}, "by_sum");
  b.node("Expand", {"zr", "product"}, {"v"}, "by_product");
  b.output("y", {1, 6, 1, 4});
  make_symbolic(*b.g().mutable_output(0), 0, "batch");
  make_symbolic(*b.g().mutable_output(0), 2, "seq");
  b.output("t", {1, 1, 4});
  make_symbolic(*b.g().mutable_output(1), 0, "batch");
  b.output("u", {2});
  make_symbolic(*b.g().mutable_output(2), 0, "batch_plus_seq");
  b.output("v", {1});
  make_symbolic(*b.g().mutable_output(3), 0, "batch_times_seq");
  b.output("c", {1, 1, 4});
  make_symbolic(*b.g().mutable_output(4), 0, "batch");
  return b;
}

TEST(OnnxSymbolic, AnExpandWhoseTargetCanBeWrittenAnewIsReadAndWrittenSymbolic) {
  // The repeat and q's expand are read as expand operators (their target chains are
  // evaluated, not kept); a target of batch + seq or batch * seq elements cannot be written
  // from one dimension, and an expanded weight would be folded into a weight of the imported
  // batch, so those three Expands and their chains stay nodes computed at run time.
  OnnxBuilder b = expands_model();
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  EXPECT_EQ(m.info->symbolic.size(), 2u);  // batch and seq (the outputs' own names are not inputs')
  std::set<std::string> opaque_expands;
  for (const auto& o : m.summary.opaque)
    if (o.op_type == "Expand") opaque_expands.insert(o.name);
  EXPECT_EQ(opaque_expands, (std::set<std::string>{"by_sum", "by_product", "class_token"}));
  EXPECT_EQ(testing::op_counts(m.graph)["expand"], 2);

  std::string dir = testing::scratch_dir("symbolic_expand");
  std::string out = dir + "/written.onnx";
  {
    std::ofstream f(out, std::ios::binary);
    f << export_onnx_bytes(m.graph, m.info.get());
  }
  onnx::ModelProto w;
  {
    std::ifstream f(out, std::ios::binary);
    ASSERT_TRUE(w.ParseFromIstream(&f));
  }
  std::vector<int64_t> repeat_target;
  for (const auto& n : w.graph().node())
    if (n.op_type() == "Expand" && n.name() == "repeat")
      for (const auto& t : w.graph().initializer())
        if (t.name() == n.input(1)) repeat_target = tensor_ints(t, t.name());
  EXPECT_EQ(repeat_target, (std::vector<int64_t>{1, 1, 3, 1, 1}));  // batch and seq copied

  // At batch 3 and seq 5 (neither imported value) ONNX Runtime runs the written model, its
  // input declared at those values (ort_run.js feeds declared shapes).
  auto* kd = w.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type();
  kd->mutable_shape()->mutable_dim(0)->set_dim_value(3);
  kd->mutable_shape()->mutable_dim(2)->set_dim_value(5);
  {
    std::ofstream f(out, std::ios::binary);
    f << w.SerializeAsString();
  }
  HostTensor<float> k, z, q;
  k.shape = {3, 2, 5, 4};
  for (int64_t i = 0; i < numel(k.shape); ++i) k.data.push_back(static_cast<float>(i % 7) - 3.f);
  z.shape = {1};
  z.data = {1.5f};
  q.shape = {1, 1, 4};
  q.data = {0.5f, -1.f, 2.f, 3.f};
  auto got = testing::ort_run(out, {k, z, q});
  ASSERT_EQ(got.size(), 5u);
  ASSERT_EQ(got[0].shape, (Shape{3, 6, 5, 4}));
  for (int64_t bb = 0; bb < 3; ++bb)
    for (int64_t h = 0; h < 6; ++h)
      for (int64_t i = 0; i < 20; ++i)
        ASSERT_EQ(got[0].data[static_cast<size_t>((bb * 6 + h) * 20 + i)],
                  std::max(0.f, k.data[static_cast<size_t>((bb * 2 + h / 3) * 20 + i)]));
  EXPECT_EQ(got[1].shape, (Shape{3, 1, 4}));
  EXPECT_EQ(got[1].data[8], 0.5f);
  EXPECT_EQ(got[2].shape, (Shape{8}));
  EXPECT_EQ(got[3].shape, (Shape{15}));
  EXPECT_EQ(got[3].data[14], 1.5f);
  EXPECT_EQ(got[4].shape, (Shape{3, 1, 4}));
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
