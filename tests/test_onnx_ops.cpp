// Operator semantics of the importer and exporter, judged by ONNX Runtime: each small model
// is built in code, run in ONNX Runtime, imported and run with graphsub's reference
// executor, then exported and run in ONNX Runtime again. All three must agree.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/error.h"
#include "exec/reference_executor.h"
#include "onnx/onnx_model.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

using testing::OnnxBuilder;
using testing::ort_run;
using testing::scratch_dir;

void expect_close(const HostTensor<float>& got, const HostTensor<float>& want,
                  const std::string& what) {
  Difference d = compare(got, want, Tolerance{});
  EXPECT_TRUE(d.ok) << what << ": shapes " << shape_str(got.shape) << " and "
                    << shape_str(want.shape) << ", max abs diff " << d.max_abs;
}

// Runs the three-way comparison; returns the imported model for further checks.
// Without `reference` (models with opaque nodes) only ONNX Runtime runs the two files.
ImportedModel agree(OnnxBuilder& b, const std::string& name, bool reference = true) {
  std::string dir = scratch_dir("ops");
  std::string orig = b.save(dir + "/" + name + ".onnx");
  ImportedModel m = import_onnx_file(orig);
  std::vector<HostTensor<float>> ins;
  TensorMap<float> feeds;
  for (NodeId id : m.graph.inputs()) {
    const Node& n = m.graph.node(id);
    HostTensor<float> t{n.outputs[0].shape, random_values(n.outputs[0].numel(), 11 + id)};
    feeds[n.name] = t;
    ins.push_back(t);
  }
  auto want = ort_run(orig, ins);
  if (reference) {
    auto ours = run_reference(m.graph, feeds);
    EXPECT_EQ(ours.size(), want.size());
    for (size_t i = 0; i < std::min(ours.size(), want.size()); ++i)
      expect_close(ours[i], want[i], name + " reference executor, output " + std::to_string(i));
  }
  std::string exported = dir + "/" + name + ".out.onnx";
  export_onnx_file(m.graph, m.info.get(), exported);
  auto again = ort_run(exported, ins);
  EXPECT_EQ(again.size(), want.size());
  for (size_t i = 0; i < std::min(again.size(), want.size()); ++i)
    expect_close(again[i], want[i], name + " exported model, output " + std::to_string(i));
  return m;
}

TEST(OnnxOps, ConvPoolGemmBlock) {
  OnnxBuilder b(13);
  b.input("x", {1, 4, 13, 11});
  b.init("w", {6, 2, 3, 3});
  b.init("wb", {6});
  auto& conv = b.node("Conv", {"x", "w", "wb"}, {"c"});
  OnnxBuilder::attr(conv, "group", int64_t{2});
  OnnxBuilder::attr(conv, "pads", std::vector<int64_t>{1, 0, 2, 1});
  OnnxBuilder::attr(conv, "strides", std::vector<int64_t>{2, 1});
  OnnxBuilder::attr(conv, "dilations", std::vector<int64_t>{1, 2});
  b.node("Relu", {"c"}, {"r"});
  auto& mp = b.node("MaxPool", {"r"}, {"p"});
  OnnxBuilder::attr(mp, "kernel_shape", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(mp, "strides", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(mp, "ceil_mode", int64_t{1});
  auto& ap = b.node("AveragePool", {"p"}, {"a"});
  OnnxBuilder::attr(ap, "kernel_shape", std::vector<int64_t>{3, 3});
  OnnxBuilder::attr(ap, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("GlobalAveragePool", {"a"}, {"g"});
  b.node("Flatten", {"g"}, {"f"});
  b.init("fc", {5, 6});
  b.init("fcb", {1, 5});
  auto& gemm = b.node("Gemm", {"f", "fc", "fcb"}, {"y"});
  OnnxBuilder::attr(gemm, "transB", int64_t{1});
  OnnxBuilder::attr(gemm, "alpha", 0.5f);
  OnnxBuilder::attr(gemm, "beta", 2.0f);
  b.output("y", {1, 5});
  ImportedModel m = agree(b, "conv_pool_gemm");
  EXPECT_TRUE(m.summary.opaque.empty());
}

TEST(OnnxOps, AutoPadAndAveragePoolCountingPads) {
  OnnxBuilder b(11);
  b.input("x", {1, 2, 9, 10});
  b.init("w", {3, 2, 4, 3});
  auto& c1 = b.node("Conv", {"x", "w"}, {"c1"});
  OnnxBuilder::attr(c1, "auto_pad", std::string("SAME_UPPER"));
  OnnxBuilder::attr(c1, "strides", std::vector<int64_t>{2, 2});
  auto& c2 = b.node("Conv", {"x", "w"}, {"c2"});
  OnnxBuilder::attr(c2, "auto_pad", std::string("SAME_LOWER"));
  auto& p = b.node("AveragePool", {"c2"}, {"p"});
  OnnxBuilder::attr(p, "kernel_shape", std::vector<int64_t>{3, 3});
  OnnxBuilder::attr(p, "auto_pad", std::string("SAME_UPPER"));
  OnnxBuilder::attr(p, "count_include_pad", int64_t{1});
  auto& v = b.node("MaxPool", {"c1"}, {"v"});
  OnnxBuilder::attr(v, "kernel_shape", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(v, "auto_pad", std::string("VALID"));
  b.output("p", {1, 3, 9, 10});
  b.output("v", {1, 3, 4, 4});
  agree(b, "auto_pad");
}

TEST(OnnxOps, BroadcastingArithmeticAndActivations) {
  OnnxBuilder b(13);
  b.input("x", {2, 3, 4});
  b.input("y", {2, 3, 4});
  b.init("row", {4});
  b.init("s", {});
  b.node("Add", {"x", "row"}, {"a"});
  b.node("Mul", {"a", "s"}, {"m"});
  b.node("Sub", {"m", "y"}, {"d"});
  b.node("Exp", {"d"}, {"e"});
  b.node("Div", {"x", "e"}, {"q"});
  b.node("Sqrt", {"e"}, {"r"});
  b.node("Mul", {"q", "r"}, {"qr"});
  b.node("Sigmoid", {"qr"}, {"s1"});
  b.node("Tanh", {"s1"}, {"t1"});
  b.node("Erf", {"t1"}, {"e1"});
  b.node("Add", {"e1", "y"}, {"out"});
  b.output("out", {2, 3, 4});
  ImportedModel m = agree(b, "arith");
  auto ops = testing::op_counts(m.graph);
  EXPECT_EQ(ops["ewadd"], 1);  // equal shapes use the generator's operators
  EXPECT_EQ(ops["add"], 1);    // broadcasting
  EXPECT_EQ(ops["smul"], 1);   // times a 0-d scalar
}

// A product with a constant of one element that leaves the other operand's shape (torch's
// attention scale, [1]) is a product with a scalar; one that would widen it ([1,1,1,1] times a
// rank-3 tensor) broadcasts.
TEST(OnnxOps, ProductWithAOneElementConstantIsAScalarProduct) {
  OnnxBuilder b(13);
  b.input("x", {2, 3, 4});
  b.init_floats("one", {0.5f}, Shape{1});
  b.init_floats("wide", {2.0f}, Shape{1, 1, 1, 1});
  b.node("Mul", {"one", "x"}, {"m"});
  b.node("Mul", {"m", "wide"}, {"y"});
  b.output("y", {1, 2, 3, 4});
  auto ops = testing::op_counts(agree(b, "one_element_product").graph);
  EXPECT_EQ(ops["smul"], 1);
  EXPECT_EQ(ops["mul"], 1);
}

TEST(OnnxOps, ShapeOperatorsOpset13) {
  OnnxBuilder b(13);
  b.input("x", {2, 6, 4});
  b.init_ints("shape", {0, 3, -1});
  b.node("Reshape", {"x", "shape"}, {"r"});  // [2,3,8]
  auto& t = b.node("Transpose", {"r"}, {"t"});
  OnnxBuilder::attr(t, "perm", std::vector<int64_t>{2, 0, 1});  // [8,2,3]
  b.init_ints("sizes", {3, 5});
  auto& sp = b.node("Split", {"t", "sizes"}, {"s0", "s1"});
  OnnxBuilder::attr(sp, "axis", int64_t{0});
  auto& cc = b.node("Concat", {"s1", "s0"}, {"c"});
  OnnxBuilder::attr(cc, "axis", int64_t{-3});
  b.init_ints("starts", {7, 0});
  b.init_ints("ends", {-100, 2});
  b.init_ints("axes", {0, 2});
  b.init_ints("steps", {-2, 1});
  b.node("Slice", {"c", "starts", "ends", "axes", "steps"}, {"sl"});  // [4,2,2]
  b.init_ints("uaxes", {1, -1});
  b.node("Unsqueeze", {"sl", "uaxes"}, {"u"});  // [4,1,2,2,1]
  b.init_ints("saxes", {4});
  b.node("Squeeze", {"u", "saxes"}, {"sq"});  // [4,1,2,2]
  b.init_ints("pads", {0, 1, 0, 2, 1, 0, 1, 0});
  b.init("pv", {});
  b.node("Pad", {"sq", "pads", "pv"}, {"pd"});
  auto& fl = b.node("Flatten", {"pd"}, {"out"});
  OnnxBuilder::attr(fl, "axis", int64_t{2});
  b.output_untyped("out");  // ONNX shape inference fills it in
  agree(b, "shape13");
}

TEST(OnnxOps, ShapeOperatorsOpset11AttributesAndSoftmaxCoercion) {
  OnnxBuilder b(11);
  b.input("x", {2, 3, 4});
  auto& sp = b.node("Split", {"x"}, {"a", "b2"});
  OnnxBuilder::attr(sp, "axis", int64_t{2});
  OnnxBuilder::attr(sp, "split", std::vector<int64_t>{1, 3});
  auto& us = b.node("Unsqueeze", {"a"}, {"ua"});
  OnnxBuilder::attr(us, "axes", std::vector<int64_t>{0});
  auto& sq = b.node("Squeeze", {"ua"}, {"sa"});
  OnnxBuilder::attr(sq, "axes", std::vector<int64_t>{0});
  auto& sm = b.node("Softmax", {"b2"}, {"s"});  // opset 11: over axes 1.. flattened
  OnnxBuilder::attr(sm, "axis", int64_t{1});
  auto& sm0 = b.node("Softmax", {"sa"}, {"s0"});
  OnnxBuilder::attr(sm0, "axis", int64_t{0});
  b.output("s", {2, 3, 3});
  b.output("s0", {2, 3, 1});
  agree(b, "softmax11");
}

TEST(OnnxOps, SoftmaxOpset13OnOneAxis) {
  OnnxBuilder b(13);
  b.input("x", {2, 3, 4});
  auto& sm = b.node("Softmax", {"x"}, {"s"});
  OnnxBuilder::attr(sm, "axis", int64_t{1});
  b.output("s", {2, 3, 4});
  agree(b, "softmax13");
}

TEST(OnnxOps, MatMulNormsAndReductions) {
  OnnxBuilder b(17);
  b.input("x", {2, 3, 4});
  b.input("v", {4});
  b.init("w", {4, 5});
  b.init("wb", {2, 5, 3});
  b.node("MatMul", {"x", "w"}, {"m"});    // [2,3,5]
  b.node("MatMul", {"m", "wb"}, {"bm"});  // batched [2,3,3]
  b.node("MatMul", {"v", "w"}, {"vw"});   // vector [5]
  b.node("MatMul", {"x", "v"}, {"xv"});   // [2,3]
  b.init("g", {3});
  b.init("bb", {3});
  auto& ln = b.node("LayerNormalization", {"bm", "g", "bb"}, {"ln"});
  OnnxBuilder::attr(ln, "epsilon", 1e-3f);
  auto& rm = b.node("ReduceMean", {"ln"}, {"rm"});
  OnnxBuilder::attr(rm, "axes", std::vector<int64_t>{-1});
  OnnxBuilder::attr(rm, "keepdims", int64_t{0});
  b.input("img", {2, 3, 4, 4});
  b.init("sc", {3});
  b.init("bi", {3});
  b.init("mu", {3});
  b.init("var", {3}, 99, 0.5f, 2.0f);
  b.node("Sqrt", {"var"}, {"var_pos"});  // a weight-only subgraph, computed at export
  b.node("Mul", {"var_pos", "var_pos"}, {"var_sq"});
  auto& bn = b.node("BatchNormalization", {"img", "sc", "bi", "mu", "var_sq"}, {"bn"});
  OnnxBuilder::attr(bn, "epsilon", 1e-3f);
  b.output("rm", {2, 3});
  b.output("vw", {5});
  b.output("xv", {2, 3});
  b.output("bn", {2, 3, 4, 4});
  agree(b, "matmul_norm");
}

TEST(OnnxOps, LayerNormalizationDecomposedBeforeOpset17) {
  OnnxBuilder b(17);
  b.input("x", {2, 3, 4});
  b.init("g", {3, 4});
  auto& ln = b.node("LayerNormalization", {"x", "g"}, {"y"});
  OnnxBuilder::attr(ln, "axis", int64_t{1});
  b.output("y", {2, 3, 4});
  std::string dir = scratch_dir("ops");
  ImportedModel m = import_onnx_file(b.save(dir + "/ln.onnx"));
  ExportOptions opts;
  opts.opset = 13;
  std::string out = dir + "/ln13.onnx";
  export_onnx_file(m.graph, m.info.get(), out, opts);
  ImportedModel again = import_onnx_file(out);
  auto x = random_feeds(m.graph, 5);
  auto want = run_reference(m.graph, x);
  expect_close(run_reference(again.graph, x)[0], want[0], "decomposed layernorm");
  expect_close(ort_run(out, {x.at("x")})[0], want[0], "decomposed layernorm in ORT");
}

TEST(OnnxOps, IdentityDropoutConstantAndRuntimeShapesAreResolved) {
  OnnxBuilder b(13);
  b.input("x", {2, 3, 4});
  b.node("Identity", {"x"}, {"i"});
  b.node("Dropout", {"i"}, {"d"});
  auto& k = b.node("Constant", {}, {"k"});
  auto* a = k.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(1);
  a->mutable_t()->add_dims(4);
  for (int i = 0; i < 4; ++i) a->mutable_t()->add_float_data(0.25f * static_cast<float>(i));
  b.node("Add", {"d", "k"}, {"s"});
  // Shape -> Gather -> Concat -> Reshape: computed at run time in ONNX, static here.
  b.node("Shape", {"s"}, {"shp"});
  b.init_ints("idx", {0});
  b.node("Gather", {"shp", "idx"}, {"n"});
  b.init_ints("rest", {-1});
  auto& cc = b.node("Concat", {"n", "rest"}, {"target"});
  OnnxBuilder::attr(cc, "axis", int64_t{0});
  b.node("Reshape", {"s", "target"}, {"y"});
  b.output("y", {2, 12});
  ImportedModel m = agree(b, "identity_dropout");
  EXPECT_EQ(m.summary.removed, 2);
  EXPECT_TRUE(m.summary.opaque.empty() || m.summary.opaque[0].op_type == "Gather");
  for (NodeId id = 0; id < m.graph.num_slots(); ++id)
    if (m.graph.alive(id)) {
      EXPECT_NE(m.graph.node(id).op->name, "opaque") << m.graph.describe(id);
    }
}

TEST(OnnxOps, NodesInAnyOrder) {
  OnnxBuilder b(13);
  b.input("x", {1, 2, 5, 5});
  b.init("w", {2, 2, 3, 3});
  b.node("Relu", {"c"}, {"y"});  // reads what the next node produces
  b.node("Conv", {"x", "w"}, {"c"});
  b.output("y", {1, 2, 3, 3});
  ImportedModel m = agree(b, "order");
  EXPECT_EQ(m.graph.num_ops(), 2u);
}

TEST(OnnxOps, UnknownStandardOperatorStaysOpaqueAndRoundTrips) {
  OnnxBuilder b(13);
  b.input("x", {1, 3, 4, 4});
  b.init("w", {3, 3, 1, 1});
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("Softplus", {"c"}, {"l"}, "softplus");
  b.node("Relu", {"l"}, {"y"});
  b.output("y", {1, 3, 4, 4});
  ImportedModel m = agree(b, "softplus", false);
  ASSERT_EQ(m.summary.opaque.size(), 1u);
  EXPECT_EQ(m.summary.opaque[0].op_type, "Softplus");
  EXPECT_EQ(m.summary.opaque[0].name, "softplus");
}

// The activations of mobilenet_v2/v3 and efficientnet, on values spread over [-8, 8] so that
// every kink (0, 6, -3, 3) is crossed. x * sigmoid(x) and x * hardsigmoid(x) (slope 1/6) are
// recognised as silu and hardswish, as PyTorch exports them before opset 14.
TEST(OnnxOps, ActivationsOfModernNetworks) {
  OnnxBuilder b(13);
  b.input("x", {1, 4, 5, 5});
  b.init_floats("eight", {8.f}, Shape{});
  b.node("Mul", {"x", "eight"}, {"s"});
  b.init_floats("zero", {0.f}, Shape{});
  b.init_floats("six", {6.f}, Shape{});
  b.init_floats("lo", {-1.f}, Shape{});
  b.init_floats("hi", {2.5f}, Shape{});
  b.node("Clip", {"s", "zero", "six"}, {"relu6"});
  b.node("Clip", {"s", "lo", "hi"}, {"clip"});
  b.node("Clip", {"s", "zero"}, {"relu"});
  b.node("Clip", {"s", "hi", "lo"}, {"crossed"});  // bounds crossing: the upper one wins
  auto& gate = b.node("HardSigmoid", {"s"}, {"gate"});
  OnnxBuilder::attr(gate, "alpha", 1.f / 6.f);
  b.node("Mul", {"s", "gate"}, {"hardswish"});
  auto& hs = b.node("HardSigmoid", {"s"}, {"hardsigmoid"});
  OnnxBuilder::attr(hs, "alpha", 0.3f);
  OnnxBuilder::attr(hs, "beta", 0.4f);
  b.node("Sigmoid", {"s"}, {"sig"});
  b.node("Mul", {"sig", "s"}, {"silu"});
  auto& lr = b.node("LeakyRelu", {"s"}, {"leaky"});
  OnnxBuilder::attr(lr, "alpha", 0.1f);
  b.init("slope", {4, 1, 1});
  b.node("PRelu", {"s", "slope"}, {"prelu"});
  b.init_floats("two", {2.f}, Shape{});
  b.node("Pow", {"s", "two"}, {"square"});
  b.init_floats("three", {3.f}, Shape{});
  b.node("Pow", {"s", "three"}, {"cube"});
  for (const char* y : {"relu6", "clip", "relu", "crossed", "hardswish", "hardsigmoid", "silu",
                        "leaky", "prelu", "square", "cube"})
    b.output(y, {1, 4, 5, 5});
  ImportedModel m = agree(b, "modern_activations");
  EXPECT_TRUE(m.summary.opaque.empty());
  auto n = testing::op_counts(m.graph);
  for (const char* op :
       {"relu6", "clip", "relu", "hardswish", "hardsigmoid", "silu", "leaky_relu", "prelu", "pow"})
    EXPECT_EQ(n[op], op == std::string("clip") || op == std::string("pow") ? 2 : 1) << op;
  EXPECT_EQ(n["sigmoid"], 0);  // the gate of silu has no other reader
}

// PyTorch's GELU before opset 20, (x * (erf(x / sqrt(2)) + 1)) * 0.5 with scalar Constants,
// imports as one gelu; the same chain with another constant stays as it is.
TEST(OnnxOps, GeluChainAsPyTorchWritesItIsOneOperator) {
  for (float half : {0.5f, 0.25f}) {
    OnnxBuilder b(13);
    b.input("x", {2, 3, 4});
    b.init_floats("three", {3.f}, Shape{});
    b.node("Mul", {"x", "three"}, {"s"});
    b.init_floats("sqrt2", {1.4142135f}, Shape{});
    b.node("Div", {"s", "sqrt2"}, {"d"});
    b.node("Erf", {"d"}, {"e"});
    b.init_floats("one", {1.f}, Shape{});
    b.node("Add", {"e", "one"}, {"a"});
    b.node("Mul", {"s", "a"}, {"m"});
    b.init_floats("half", {half}, Shape{});
    b.node("Mul", {"m", "half"}, {"y"});
    b.output("y", {2, 3, 4});
    auto n = testing::op_counts(agree(b, fmt::format("gelu_chain_{}", half)).graph);
    EXPECT_EQ(n["gelu"], half == 0.5f ? 1 : 0) << half;
    EXPECT_EQ(n["erf"], half == 0.5f ? 0 : 1) << half;
  }
}

// RMS normalization as transformers' Llama and T5 write it imports as one rms_norm: the
// square as Pow(x, 2) or x * x, 1 / rms times x or x / rms, the scale on either side (and all
// ones, as a freshly initialized model's is, which would otherwise go as a neutral product).
// Reducing another axis than the last, or another power, is not the normalization. Variant 5
// is torch's dynamo exporter's form, 1 / rms as Reciprocal.
TEST(OnnxOps, RmsNormAsTransformersWritesItIsOneOperator) {
  for (int variant : {0, 1, 2, 3, 4, 5}) {
    OnnxBuilder b(17);
    b.input("x", {2, 3, 8});
    if (variant == 2) {
      b.node("Mul", {"x", "x"}, {"sq"});
    } else {
      b.init_floats("exponent", {variant == 4 ? 3.f : 2.f}, Shape{});
      b.node("Pow", {"x", "exponent"}, {"sq"});
    }
    auto& mean = b.node("ReduceMean", {"sq"}, {"ms"});
    OnnxBuilder::attr(mean, "axes", std::vector<int64_t>{variant == 3 ? 1 : -1});
    b.init_floats("eps", {1e-6f}, Shape{});
    b.node("Add", {"ms", "eps"}, {"me"});
    b.node("Sqrt", {"me"}, {"rms"});
    if (variant == 2) {
      b.node("Div", {"x", "rms"}, {"norm"});
    } else if (variant == 5) {
      b.node("Reciprocal", {"rms"}, {"inv"});
      b.node("Mul", {"x", "inv"}, {"norm"});
    } else {
      b.init_floats("one", {1.f}, Shape{});
      b.node("Div", {"one", "rms"}, {"inv"});
      b.node("Mul", {"x", "inv"}, {"norm"});
    }
    if (variant == 1)
      b.init_floats("g", std::vector<float>(8, 1.f), Shape{8});
    else
      b.init("g", {8});
    b.node("Mul",
           variant == 2 ? std::vector<std::string>{"norm", "g"}
                        : std::vector<std::string>{"g", "norm"},
           {"y"});
    b.output("y", {2, 3, 8});
    ImportedModel m = agree(b, fmt::format("rms_norm_{}", variant));
    auto n = testing::op_counts(m.graph);
    bool fused = variant <= 2 || variant == 5;
    EXPECT_EQ(n["rms_norm"], fused ? 1 : 0) << variant;
    EXPECT_EQ(n["sqrt"], fused ? 0 : 1) << variant;
    if (fused) {
      EXPECT_EQ(m.graph.num_ops(), 1u) << variant;
      for (NodeId id = 0; id < m.graph.num_slots(); ++id) {
        if (m.graph.alive(id) && m.graph.node(id).op->name == "rms_norm") {
          EXPECT_FLOAT_EQ(static_cast<float>(m.graph.node(id).attrs.f("epsilon")), 1e-6f);
        }
      }
    }
  }
}

// PyTorch's LayerNorm before opset 17 (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul,
// Add) imports as one layernorm: with its bias, and as a freshly initialized model has it
// (scale all ones, bias all zeros: the bias Add is then a neutral one). The mean taken over
// another axis than the variance's, or of another tensor, is not the normalization.
TEST(OnnxOps, LayerNormAsPyTorchWritesItBeforeOpset17IsOneOperator) {
  for (int variant : {0, 1, 2, 3}) {
    OnnxBuilder b(14);
    b.input("x", {2, 3, 8});
    b.input("z", {2, 3, 8});
    auto& mean = b.node("ReduceMean", {variant == 3 ? "z" : "x"}, {"m"});
    OnnxBuilder::attr(mean, "axes", std::vector<int64_t>{variant == 2 ? 1 : -1});
    b.node("Sub", {"x", "m"}, {"d"});
    b.init_floats("two", {2.f}, Shape{});
    b.node("Pow", {"d", "two"}, {"sq"});
    auto& var = b.node("ReduceMean", {"sq"}, {"v"});
    OnnxBuilder::attr(var, "axes", std::vector<int64_t>{-1});
    b.init_floats("eps", {1e-5f}, Shape{});
    b.node("Add", {"v", "eps"}, {"ve"});
    b.node("Sqrt", {"ve"}, {"s"});
    b.node("Div", {"d", "s"}, {"norm"});
    if (variant == 1) {
      b.init_floats("g", std::vector<float>(8, 1.f), Shape{8});
      b.init_floats("beta", std::vector<float>(8, 0.f), Shape{8});
    } else {
      b.init("g", {8});
      b.init("beta", {8}, 11);
    }
    b.node("Mul", {"norm", "g"}, {"scaled"});
    b.node("Add", {"scaled", "beta"}, {"y"});
    b.output("y", {2, 3, 8});
    ImportedModel m = agree(b, fmt::format("layernorm_{}", variant));
    auto n = testing::op_counts(m.graph);
    bool whole = variant <= 1;
    EXPECT_EQ(n["layernorm"], whole ? 1 : 0) << variant;
    // Otherwise what is left is the RMS normalization of the difference, which it exactly is.
    EXPECT_EQ(n["rms_norm"], whole ? 0 : 1) << variant;
    if (whole) {
      EXPECT_EQ(m.graph.num_ops(), 1u) << variant;
    }
    for (NodeId id = 0; whole && id < m.graph.num_slots(); ++id) {
      if (m.graph.alive(id) && m.graph.node(id).op->name == "layernorm") {
        EXPECT_EQ(m.graph.node(id).inputs.size(), variant == 0 ? 3u : 2u);
      }
    }
  }
}

// torch's guard after an attention softmax, Where(IsNaN(p), 0, p), is one operator
// (nan_to_zero), written back as the same two nodes; the square roots of negative inputs give
// it NaNs to zero. A Where with another fill value or another tested tensor stays opaque.
TEST(OnnxOps, NanGuardAsTorchWritesItIsOneOperator) {
  for (int variant : {0, 1, 2}) {
    OnnxBuilder b(17);
    b.input("x", {2, 3, 4});
    b.node("Sqrt", {"x"}, {"s"});
    b.node("IsNaN", {variant == 2 ? "x" : "s"}, {"bad"});
    b.init_floats("fill", {variant == 1 ? 1.f : 0.f}, Shape{});
    b.node("Where", {"bad", "fill", "s"}, {"y"});
    b.output("y", {2, 3, 4});
    ImportedModel m = agree(b, fmt::format("nan_guard_{}", variant), variant == 0);
    auto n = testing::op_counts(m.graph);
    EXPECT_EQ(n["nan_to_zero"], variant == 0 ? 1 : 0) << variant;
    EXPECT_EQ(n["opaque"], variant == 0 ? 0 : 2) << variant;
    EXPECT_EQ(m.summary.opaque.size(), variant == 0 ? 0u : 2u) << variant;
  }
}

TEST(OnnxOps, HardSwishFromOpset14AndClipWithOneBound) {
  OnnxBuilder b14(14);
  b14.input("x", {2, 3, 4});
  b14.init_floats("five", {5.f}, Shape{});
  b14.node("Mul", {"x", "five"}, {"s"});
  b14.node("HardSwish", {"s"}, {"y"});
  b14.output("y", {2, 3, 4});
  EXPECT_EQ(testing::op_counts(agree(b14, "hardswish14").graph)["hardswish"], 1);

  OnnxBuilder b11(11);
  b11.input("x", {2, 3, 4});
  b11.init_floats("nine", {9.f}, Shape{});
  b11.node("Mul", {"x", "nine"}, {"s"});
  b11.init_floats("four", {4.f}, Shape{});
  b11.node("Clip", {"s", "", "four"}, {"y"});  // no lower bound
  b11.output("y", {2, 3, 4});
  auto n = testing::op_counts(agree(b11, "clip11").graph);
  EXPECT_EQ(n["clip"], 1);
}

// A conv or matmul with a fused relu6, hardswish, silu or gelu is written as the operator and the
// activation's ONNX form (HardSwish from opset 14, HardSigmoid and Mul before).
TEST(OnnxOps, FusedActivationsAreWrittenAfterTheirOperator) {
  for (int64_t opset : {13, 14}) {
    GraphBuilder b(true, 3);
    auto x = b.input("x", {1, 3, 6, 6});
    auto t = b.conv(x, b.weight("w1", {4, 3, 3, 3}), {.pad = 1, .act = "relu6"});
    t = b.conv(t, b.weight("w2", {4, 4, 1, 1}), {.act = "hardswish"});
    t = b.conv(t, b.weight("w3", {2, 4, 3, 3}), {.pad = 1, .act = "silu"});
    auto f = b.op("flatten", {t}, {{"axis", 1}});
    b.output("y", b.matmul(f, b.weight("fc", {72, 5}), "gelu"));
    Graph g = b.finish();
    std::string out = fmt::format("{}/fused_acts_{}.onnx", scratch_dir("ops"), opset);
    ExportOptions opts;
    opts.opset = opset;
    export_onnx_file(g, nullptr, out, opts);
    TensorMap<float> feeds{{"x", {{1, 3, 6, 6}, random_values(108, 9, -4.f, 4.f)}}};
    auto want = run_reference(g, feeds);
    expect_close(ort_run(out, {feeds.at("x")})[0], want[0], fmt::format("opset {}", opset));
  }
}

TEST(OnnxOps, ReduceSumExpandGatherWithConstantParameters) {
  OnnxBuilder b(13);
  b.input("x", {2, 3, 4});
  b.init_ints("axes", {1, -1});
  auto& rs = b.node("ReduceSum", {"x", "axes"}, {"sum"});
  OnnxBuilder::attr(rs, "keepdims", int64_t{1});
  b.init_ints("shape", {3, 2, 1, 1});
  b.node("Expand", {"sum", "shape"}, {"big"});
  b.init_ints("rows", {2, -1, 0, 0, 1, 2}, Shape{2, 3});
  auto& g = b.node("Gather", {"x", "rows"}, {"picked"});
  OnnxBuilder::attr(g, "axis", int64_t{2});
  b.init_ints("one", {1}, Shape{});
  b.node("Gather", {"x", "one"}, {"first"});
  b.node("ReduceSum", {"x"}, {"all"});
  b.output("big", {3, 2, 1, 1});
  b.output("picked", {2, 3, 2, 3});
  b.output("first", {3, 4});
  b.output("all", {1, 1, 1});
  ImportedModel m = agree(b, "reduce_expand_gather");
  EXPECT_TRUE(m.summary.opaque.empty());
  auto n = testing::op_counts(m.graph);
  EXPECT_EQ(n["reduce_sum"], 2);
  EXPECT_EQ(n["expand"], 1);
  EXPECT_EQ(n["gather"], 2);
}

// Parameters computed at run time (a bound, an exponent) are outside the IR:
// those nodes stay opaque, and the model still round-trips; a constant index out of range is an
// error naming the node.
TEST(OnnxOps, RuntimeParametersStayOpaqueAndBadIndicesAreNamed) {
  OnnxBuilder b(13);
  b.input("x", {1, 2, 4, 4});
  b.input("bound", {});
  b.node("Clip", {"x", "bound"}, {"c"}, "clip_rt");
  b.node("Pow", {"c", "bound"}, {"y"}, "pow_rt");
  b.output("y", {1, 2, 4, 4});
  ImportedModel m = agree(b, "runtime_params", false);
  std::set<std::string> opaque;
  for (auto& o : m.summary.opaque) opaque.insert(o.name);
  for (const char* n : {"clip_rt", "pow_rt"}) EXPECT_TRUE(opaque.count(n)) << n;

  OnnxBuilder bad(13);
  bad.input("x", {3, 4});
  bad.init_ints("idx", {3});
  bad.node("Gather", {"x", "idx"}, {"y"}, "gather_bad");
  bad.output_untyped("y");
  std::string path = bad.save(scratch_dir("ops") + "/gather_bad.onnx");
  try {
    import_onnx_file(path);
    FAIL() << "an index out of range was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gather_bad"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
}

// The Resize modes of upsampling layers: nearest and bilinear, from scales or sizes, with each
// coordinate mapping (a size that is not a multiple of the input exercises the rounding).
TEST(OnnxOps, ResizeNearestAndLinear) {
  struct Mode {
    const char* mode;
    const char* coord;
    const char* nearest;
    bool by_scales;
    Shape out;
  };
  const Mode modes[] = {{"nearest", "asymmetric", "floor", true, {1, 2, 8, 10}},
                        {"linear", "half_pixel", "", true, {1, 2, 8, 10}},
                        {"linear", "align_corners", "", false, {1, 2, 7, 9}},
                        {"linear", "pytorch_half_pixel", "", false, {1, 2, 1, 9}},
                        {"nearest", "half_pixel", "round_prefer_ceil", false, {1, 2, 7, 3}},
                        {"nearest", "align_corners", "round_prefer_floor", true, {1, 2, 6, 10}}};
  int k = 0;
  for (const Mode& md : modes) {
    OnnxBuilder b(13);
    b.input("x", {1, 2, 4, 5});
    std::vector<std::string> ins{"x", ""};
    if (md.by_scales) {
      b.init_floats("scales", {1.f, 1.f, static_cast<float>(md.out[2]) / 4.f,
                               static_cast<float>(md.out[3]) / 5.f});
      ins.push_back("scales");
    } else {
      b.init_ints("sizes", {md.out.begin(), md.out.end()});
      ins.push_back("");
      ins.push_back("sizes");
    }
    auto& r = b.node("Resize", ins, {"y"});
    OnnxBuilder::attr(r, "mode", std::string(md.mode));
    OnnxBuilder::attr(r, "coordinate_transformation_mode", std::string(md.coord));
    if (*md.nearest) OnnxBuilder::attr(r, "nearest_mode", std::string(md.nearest));
    b.output("y", md.out);
    std::string what = fmt::format("resize_{}", k++);
    ImportedModel m = agree(b, what);
    EXPECT_EQ(testing::op_counts(m.graph)["resize"], 1) << what;
  }
}

}  // namespace
}  // namespace graphsub

namespace graphsub {
namespace {

// A generator constant read by an operator that is not folded (a depth-wise convolution of
// an input with const_pool, as generated rules write an average pool) is exported as an
// initializer with its values: ONNX has no generator operators. NasNet-A's optimized graph
// failed to export with "output 0 of node 201 (const_pool) has no name yet".
TEST(OnnxExport, GeneratorConstantsReadByOperatorsBecomeInitializers) {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 6, 6});
  Attrs a;
  a.set("kernel", std::vector<int64_t>{3, 3});
  a.set("channels", int64_t{4});
  auto k = b.op("const_pool", {}, a);
  b.output("y", b.conv(x, k, {.pad = 1}));
  Graph g = b.finish();
  std::string bytes = export_onnx_bytes(g, nullptr);
  ImportedModel back = import_onnx_bytes(bytes, "");
  auto feeds = random_feeds(g, 3);
  expect_close(run_reference(back.graph, feeds)[0], run_reference(g, feeds)[0],
               "conv with const_pool, exported and imported");
}

// The axiom language's rotary embedding (one batch and head, a matrix) has no ONNX form of its
// own: it is written as the rank-4 node between Reshapes, and reads back computing the same;
// an opset before 23 has no RotaryEmbedding, and the exporter says so by name.
TEST(OnnxExport, RotaryEmbeddingOfAMatrixIsWrittenAsTheRankFourNode) {
  GraphBuilder b;
  auto x = b.input("x", {5, 8});
  auto cos = b.input("cos", {5, 4});
  auto sin = b.input("sin", {5, 4});
  auto y = b.op("rotary_embedding", {x, cos, sin}, {});
  b.output("y", b.op("neg", {y}, {}));
  Graph g = b.finish();
  ExportOptions opts;
  opts.opset = 23;
  std::string bytes = export_onnx_bytes(g, nullptr, opts);
  EXPECT_EQ(onnx_node_counts(bytes).at("RotaryEmbedding"), 1);
  EXPECT_EQ(onnx_node_counts(bytes).at("Neg"), 1);
  ImportedModel back = import_onnx_bytes(bytes, "");
  auto feeds = random_feeds(g, 5);
  expect_close(run_reference(back.graph, feeds)[0], run_reference(g, feeds)[0],
               "rotary embedding of a matrix, exported and imported");
  opts.opset = 22;
  try {
    export_onnx_bytes(g, nullptr, opts);
    ADD_FAILURE() << "a RotaryEmbedding was written at opset 22";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("RotaryEmbedding"), std::string::npos) << e.what();
  }
}

// ONNX Runtime's GroupQueryAttention: its lengths are written as int32 inputs 5 and 6 (after
// two empty names where there is no past) and read back as the same attributes, so that the
// written node computes what the IR node does, with a past and without.
TEST(OnnxExport, GroupQueryAttentionLengthsAreWrittenAsInt32InputsAndReadBack) {
  for (int64_t past : {0, 3}) {
    GraphBuilder b;
    int64_t total = past + 2;
    std::vector<TensorRef> in{b.input("q", {1, 2, 32}), b.input("k", {1, 2, 16}),
                              b.input("v", {1, 2, 16})};
    if (past > 0) {
      in.push_back(b.input("pk", {1, 2, past, 8}));
      in.push_back(b.input("pv", {1, 2, past, 8}));
    }
    auto outs = b.op_multi("ort_gqa", in,
                           {{"num_heads", int64_t{4}},
                            {"kv_num_heads", int64_t{2}},
                            {"seqlens_k", std::vector<int64_t>{total - 1}},
                            {"total_sequence_length", std::vector<int64_t>{total}}});
    b.output("y", outs[0]);
    b.output("present_key", outs[1]);
    Graph g = b.finish();
    std::string bytes = export_onnx_bytes(g, nullptr);
    EXPECT_EQ(onnx_node_counts(bytes).at("com.microsoft:GroupQueryAttention"), 1);
    ImportedModel back = import_onnx_bytes(bytes, "");
    size_t read = 0;
    for (NodeId id : back.graph.topo_order()) read += back.graph.node(id).op->name == "ort_gqa";
    ASSERT_EQ(read, 1u) << "past " << past << ": the node was kept opaque";
    auto feeds = random_feeds(g, 7);
    auto want = run_reference(g, feeds);
    auto got = run_reference(back.graph, feeds);
    for (size_t k = 0; k < 2; ++k)
      expect_close(got[k], want[k], "group query attention, exported and imported");
  }
}

// ONNX Runtime's RotaryEmbedding takes batches of sequences: its matrix form (the axiom
// language's) has no node, and the writer says so rather than write a wrong one.
TEST(OnnxExport, OrtRotaryEmbeddingOfAMatrixIsRefusedByName) {
  GraphBuilder b;
  auto x = b.input("x", {5, 8});
  auto cos = b.input("cos", {5, 4});
  auto sin = b.input("sin", {5, 4});
  b.output("y", b.op("ort_rotary_embedding", {x, cos, sin},
                     {{"position_ids", std::vector<int64_t>{0}}}));
  Graph g = b.finish();
  try {
    export_onnx_bytes(g, nullptr);
    ADD_FAILURE() << "an ORT RotaryEmbedding of a matrix was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank-2 input has no RotaryEmbedding node"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace graphsub
