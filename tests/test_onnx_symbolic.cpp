// Symbolic input dimensions: imported at one value, written back symbolic (dim_params,
// Reshape targets with 0 and -1), and refused with the node named when the graph fixed the
// value. End to end with PyTorch models and ONNX Runtime: test_onnx_torchvision.cpp.
#include <gtest/gtest.h>

#include "core/error.h"
#include "onnx/onnx_model.h"
#include "onnx/tensor_proto.h"
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
  EXPECT_EQ(m.info->symbolic[0].value, 1);
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

TEST(OnnxSymbolic, AGraphThatFixedTheBatchIsRefusedWithTheNodeNamed) {
  // ConstantOfShape(Shape(x)) is evaluated at import into a weight of the batch's shape:
  // the graph holds the value 1 and cannot be written with the batch symbolic.
  OnnxBuilder b(13);
  b.input("x", {1, 4});
  make_symbolic(*b.g().mutable_input(0), 0, "batch");
  b.node("Shape", {"x"}, {"shape"});
  b.node("ConstantOfShape", {"shape"}, {"zeros"}, "zeros_like");
  b.node("Add", {"x", "zeros"}, {"y"});
  b.output("y", {1, 4});
  make_symbolic(*b.g().mutable_output(0), 0, "batch");
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  ASSERT_EQ(m.info->symbolic.size(), 1u) << fmt::format("{}", fmt::join(m.summary.notes, "\n"));
  try {
    export_onnx_bytes(m.graph, m.info.get());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("zeros"), std::string::npos) << what;
    EXPECT_NE(what.find("'batch'"), std::string::npos) << what;
  }
  // Without symbolic dimensions the same model imports and exports at batch 1.
  ImportOptions fixed;
  fixed.keep_symbolic = false;
  ImportedModel f = import_onnx_bytes(b.bytes(), "", fixed);
  EXPECT_TRUE(f.info->symbolic.empty());
  EXPECT_NO_THROW(export_onnx_bytes(f.graph, f.info.get()));
}

}  // namespace
}  // namespace graphsub
