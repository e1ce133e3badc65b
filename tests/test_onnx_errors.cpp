// Bad input: every problem is an Error whose message names it, never a crash or a hang.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "onnx/onnx_model.h"
#include "onnx/format/operator_versions.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

using testing::OnnxBuilder;
using testing::scratch_dir;

// Imports `bytes` and returns the error message (failing the test if none is thrown).
std::string import_error(const std::string& bytes) {
  try {
    import_onnx_bytes(bytes, "");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "import succeeded";
  return "";
}

OnnxBuilder small_model(int64_t opset = 13) {
  OnnxBuilder b(opset);
  b.input("x", {1, 2, 4, 4});
  b.init("w", {2, 2, 3, 3});
  auto& c = b.node("Conv", {"x", "w"}, {"c"});
  OnnxBuilder::attr(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"y"});
  b.output("y", {1, 2, 4, 4});
  return b;
}

TEST(OnnxErrors, TheValidModelImports) {
  ImportedModel m = import_onnx_bytes(small_model().bytes(), "");
  EXPECT_EQ(m.graph.num_ops(), 2u);
}

TEST(OnnxErrors, GarbageEmptyAndMissingFiles) {
  EXPECT_NE(
      import_error("this is not a protobuf at all \xff\xff\xff").find("not a valid ONNX model"),
      std::string::npos);
  EXPECT_NE(import_error("").find("empty"), std::string::npos);
  EXPECT_NE(import_error(std::string("\x08\x07", 2)).find("no graph"), std::string::npos);
  try {
    import_onnx_file(scratch_dir("errors") + "/does_not_exist.onnx");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
}

TEST(OnnxErrors, TruncatedFilesAtEveryLength) {
  std::string bytes = small_model().bytes();
  // Every prefix either fails with an Error or (cut at a field boundary) imports a model that
  // is still complete; none crashes.
  size_t errors = 0;
  for (size_t len = 0; len < bytes.size(); ++len) {
    try {
      import_onnx_bytes(bytes.substr(0, len), "");
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, bytes.size() / 2);
}

TEST(OnnxErrors, UnsupportedOpsets) {
  int64_t past = newest_onnx_opset() + 1;
  std::string e = import_error(small_model(past).bytes());
  EXPECT_NE(e.find(fmt::format("opset {}", past)), std::string::npos) << e;
  EXPECT_NE(e.find(fmt::format("reads opsets 1 to {}", past - 1)), std::string::npos) << e;
  OnnxBuilder none = small_model();
  none.m.clear_opset_import();
  EXPECT_NE(import_error(none.bytes()).find("which the model does not import"), std::string::npos);
}

TEST(OnnxVersions, OperatorVersionsFollowTheModelsOpset) {
  EXPECT_EQ(onnx_operator_version("Clip", 10), 6);
  EXPECT_EQ(onnx_operator_version("Clip", 11), 11);
  EXPECT_EQ(onnx_operator_version("ReduceMean", 23), 18);
  EXPECT_EQ(onnx_operator_version("Expand", 7), std::nullopt);
  EXPECT_TRUE(reads_operator_version("Clip", 6));
  EXPECT_TRUE(reads_operator_version("Split", 18));
  EXPECT_FALSE(reads_operator_version("Resize", 10));
  EXPECT_FALSE(reads_operator_version("Upsample", 9));
  EXPECT_FALSE(reads_operator_version("NoSuchOperator", 1));
}

TEST(OnnxVersions, AnUnreadFormIsKeptOpaqueWithItsReason) {
  // Resize-10 takes its scales as input 1; Resize-11 reads input 1 as roi. Not misread: opaque.
  OnnxBuilder b(10);
  b.input("x", {1, 1, 2, 2});
  b.init_floats("scales", {1, 1, 2, 2});
  b.node("Resize", {"x", "scales"}, {"y"});
  b.output("y", {1, 1, 4, 4});
  auto m = import_onnx_bytes(b.bytes(), "");
  ASSERT_EQ(m.summary.opaque.size(), 1u);
  EXPECT_NE(m.summary.opaque[0].reason.find("Resize-10"), std::string::npos);
}

TEST(OnnxErrors, CyclesAreNamed) {
  OnnxBuilder b;
  b.input("x", {2, 2});
  b.node("Add", {"x", "b"}, {"a"}, "first");
  b.node("Relu", {"a"}, {"b"}, "second");
  b.output("b", {2, 2});
  std::string e = import_error(b.bytes());
  EXPECT_NE(e.find("cycle"), std::string::npos) << e;
  EXPECT_NE(e.find("first"), std::string::npos) << e;
}

TEST(OnnxErrors, MissingInitializerIsNamed) {
  OnnxBuilder b = small_model();
  b.g().clear_initializer();
  std::string e = import_error(b.bytes());
  EXPECT_NE(e.find("'w'"), std::string::npos) << e;
  EXPECT_NE(e.find("missing initializer"), std::string::npos) << e;
}

TEST(OnnxErrors, InconsistentShapes) {
  {
    OnnxBuilder b;  // operands that do not broadcast
    b.input("x", {2, 3});
    b.input("y", {4, 5});
    b.node("Add", {"x", "y"}, {"z"});
    b.output("z", {2, 3});
    std::string e = import_error(b.bytes());
    EXPECT_FALSE(e.empty());
  }
  {
    OnnxBuilder b = small_model();  // declared output shape contradicts the computation
    b.g()
        .mutable_output(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(3)
        ->set_dim_value(7);
    std::string e = import_error(b.bytes());
    EXPECT_TRUE(e.find("inconsistent") != std::string::npos ||
                e.find("shape inference") != std::string::npos)
        << e;
  }
  {
    OnnxBuilder b = small_model();  // weight with fewer values than its shape needs
    b.g().mutable_initializer(0)->mutable_float_data()->RemoveLast();
    std::string e = import_error(b.bytes());
    EXPECT_NE(e.find("initializer 'w'"), std::string::npos) << e;
  }
  {
    OnnxBuilder b = small_model();  // group that does not divide the channels
    auto& c = *b.g().mutable_node(0);
    OnnxBuilder::attr(c, "group", int64_t{3});
    EXPECT_FALSE(import_error(b.bytes()).empty());
  }
}

TEST(OnnxErrors, TensorsProducedTwiceAndUndefinedOutputs) {
  OnnxBuilder b;
  b.input("x", {2});
  b.node("Relu", {"x"}, {"y"}, "one");
  b.node("Sigmoid", {"x"}, {"y"}, "two");
  b.output("y", {2});
  EXPECT_NE(import_error(b.bytes()).find("produced by two nodes"), std::string::npos);
  OnnxBuilder c;
  c.input("x", {2});
  c.node("Relu", {"x"}, {"y"});
  c.output("nowhere", {2});
  EXPECT_NE(import_error(c.bytes()).find("'nowhere'"), std::string::npos);
}

TEST(OnnxErrors, OpaqueNodeWithoutShapeIsNamed) {
  OnnxBuilder b;
  auto* o = b.m.add_opset_import();
  o->set_domain("com.example");
  o->set_version(1);
  b.input("x", {2, 3});
  auto& n = b.node("Mystery", {"x"}, {"m"}, "mystery");
  n.set_domain("com.example");
  b.node("Relu", {"m"}, {"y"});
  b.output_untyped("y");
  std::string e = import_error(b.bytes());
  EXPECT_NE(e.find("mystery"), std::string::npos) << e;
  EXPECT_NE(e.find("value_info"), std::string::npos) << e;
}

TEST(OnnxErrors, ExternalDataOutsideTheModelFolderIsRefused) {
  OnnxBuilder b = small_model();
  auto* t = b.g().mutable_initializer(0);
  t->clear_float_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("../secret.bin");
  std::string dir = scratch_dir("errors");
  std::string path = b.save(dir + "/escape.onnx");
  try {
    import_onnx_file(path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("relative path below"), std::string::npos) << e.what();
  }
  kv->set_value("missing.bin");
  path = b.save(dir + "/missing.onnx");
  try {
    import_onnx_file(path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.bin"), std::string::npos) << e.what();
  }
}

TEST(OnnxErrors, SymbolicInputDimensionsAreFixedWithANote) {
  OnnxBuilder b = small_model();
  OnnxBuilder::symbolic_dim(b.g().mutable_input(0), 0, "batch");
  OnnxBuilder::symbolic_dim(b.g().mutable_output(0), 0, "batch");
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  ASSERT_EQ(m.summary.notes.size(), 1u);
  EXPECT_NE(m.summary.notes[0].find("batch"), std::string::npos);
  ImportOptions opts;
  opts.input_shapes["x"] = {3, 2, 4, 4};
  ImportedModel m3 = import_onnx_bytes(b.bytes(), "", opts);
  EXPECT_EQ(m3.graph.type(m3.graph.outputs()[0].ref).shape, (Shape{3, 2, 4, 4}));
  opts.input_shapes["x"] = {3, 5, 4, 4};  // contradicts the fixed channel count
  try {
    import_onnx_bytes(b.bytes(), "", opts);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("contradicts"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace graphsub
