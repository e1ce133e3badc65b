// float16 and bfloat16 models (issue 18, item 4): a model computing in one half type
// throughout is imported as float32 (exactly), optimized and checked there with the type's
// tolerances, and written back in its own type; a model that mixes float32 with a half type
// keeps its half-typed nodes opaque, exactly as they were, and reports them by op type.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "check/equivalence.h"
#include "onnx/format/half_precision.h"
#include "onnx/onnx_model.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

using onnx::TensorProto;
using testing::OnnxBuilder;
using testing::optimize_small;
using testing::run_command;
using testing::scratch_dir;
using testing::tool;

std::string convert(const std::string& in, const std::string& out, const std::string& flag) {
  std::string log;
  int rc = run_command(fmt::format("{} {} {} {} {}", GRAPHSUB_TEST_PYTHON,
                                   tool("convert_float16.py"), in, out, flag),
                       &log);
  if (rc != 0) throw std::runtime_error("convert_float16.py failed:\n" + log);
  return out;
}

onnx::ModelProto read_model(const std::string& path) {
  onnx::ModelProto m;
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&f)) << path;
  return m;
}

// Element types of the initializers of a written model.
std::set<int32_t> initializer_types(const onnx::ModelProto& m) {
  std::set<int32_t> types;
  for (const auto& t : m.graph().initializer()) types.insert(t.data_type());
  return types;
}

int crosscheck(const std::string& a, const std::string& b, double rtol, double atol,
               std::string* log) {
  return run_command(fmt::format("node {} {} {} --inputs 2 --time 0 --rtol {} --atol {}",
                                 tool("ort_crosscheck.js"), a, b, rtol, atol),
                     log);
}

// Optimizes an imported half model, checks it with the type's tolerances and writes it to
// `out`: the written model's initializers and first input have the model's type. Returns the
// tolerances used.
std::pair<double, double> optimize_check_write(const ImportedModel& m, const std::string& out) {
  int32_t type = m.info->float_type;
  opt::OptimizeResult r = optimize_small(m.graph, 20);
  EXPECT_LT(r.optimized.num_ops(), m.graph.num_ops());  // the activations fuse
  Tolerance tol = tolerance_for(m.info->stored_precision(), {.rtol = 1e-4, .atol = 1e-5});
  EXPECT_TRUE(check_equivalent(m.graph, r.optimized,
                               {.runs = 1,
                                .seed = 5,
                                .tolerance = tol,
                                .executor = CheckExecutor::Onednn})
                  .ok);
  export_onnx_file(r.optimized, m.info.get(), out);
  onnx::ModelProto written = read_model(out);
  EXPECT_EQ(initializer_types(written), (std::set<int32_t>{type}));
  EXPECT_EQ(written.graph().input(0).type().tensor_type().elem_type(), type);
  EXPECT_EQ(written.graph().output(0).type().tensor_type().elem_type(), type);
  return {tol.rtol, tol.atol};
}

TEST(HalfPrecision, RoundingIsToNearestEvenInEachType) {
  EXPECT_EQ(round_to_half(1.0f / 3.0f, TensorProto::FLOAT16), 0.333251953125f);
  EXPECT_EQ(round_to_half(1.0f / 3.0f, TensorProto::BFLOAT16), 0.333984375f);
  EXPECT_EQ(round_to_half(2049.0f, TensorProto::FLOAT16), 2048.0f);  // a tie goes to even
  EXPECT_EQ(round_to_half(2051.0f, TensorProto::FLOAT16), 2052.0f);
  EXPECT_EQ(round_to_half(65520.0f, TensorProto::FLOAT16), INFINITY);  // past the largest half
  EXPECT_EQ(round_to_half(6e-8f, TensorProto::FLOAT16), 0x1p-24f);     // the smallest subnormal
  EXPECT_EQ(round_to_half(-1e-8f, TensorProto::FLOAT16), 0.0f);
  EXPECT_TRUE(std::isnan(round_to_half(NAN, TensorProto::BFLOAT16)));
  Tolerance given{.rtol = 1e-4, .atol = 1e-5};
  EXPECT_EQ(tolerance_for(StoredPrecision::Float32, given).rtol, 1e-4);
  EXPECT_EQ(tolerance_for(StoredPrecision::Float16, given).rtol, 1e-2);
  EXPECT_EQ(tolerance_for(StoredPrecision::Float16, given).atol, 1e-3);
  EXPECT_EQ(tolerance_for(StoredPrecision::BFloat16, {.rtol = 0.1, .atol = 0.1}).rtol, 0.1);
}

// resnet18 converted to float16: optimized like the float32 model, written as float16, and in
// ONNX Runtime (float16 kernels) it gives the original's outputs within float16's tolerance.
TEST(HalfPrecision, Float16ResnetIsOptimizedAndWrittenAsFloat16) {
  std::string dir = scratch_dir("half");
  std::string f16 =
      convert(testing::torchvision_model("resnet18", 64), dir + "/resnet18_64_f16.onnx", "");
  ImportedModel m = import_onnx_file(f16);
  EXPECT_EQ(m.info->float_type, TensorProto::FLOAT16);
  EXPECT_TRUE(m.summary.opaque.empty());
  ASSERT_FALSE(m.summary.notes.empty());
  EXPECT_NE(m.summary.notes.back().find("FLOAT16 model"), std::string::npos);

  std::string out = dir + "/resnet18_64_f16.out.onnx";
  auto [rtol, atol] = optimize_check_write(m, out);
  std::string log;
  EXPECT_EQ(crosscheck(f16, out, rtol, atol, &log), 0) << log;
}

// A bfloat16 MLP: optimized and written as bfloat16. ONNX Runtime's CPU provider has no
// bfloat16 MatMul, Add or Relu, so both files are compared there after widening to float32.
TEST(HalfPrecision, Bfloat16ModelIsOptimizedAndWrittenAsBfloat16) {
  std::string dir = scratch_dir("half");
  OnnxBuilder b(13);
  b.input("x", {4, 16});
  b.init("w1", {16, 32}, 3, -0.5f, 0.5f);
  b.init("w2", {32, 8}, 5, -0.5f, 0.5f);
  b.node("MatMul", {"x", "w1"}, {"h"});
  b.node("Relu", {"h"}, {"r"});
  b.node("MatMul", {"r", "w2"}, {"y"});
  b.output("y", {4, 8});
  std::string bf16 = convert(b.save(dir + "/mlp.onnx"), dir + "/mlp_bf16.onnx", "--bfloat16");
  ImportedModel m = import_onnx_file(bf16);
  EXPECT_EQ(m.info->float_type, TensorProto::BFLOAT16);
  EXPECT_TRUE(m.summary.opaque.empty());

  std::string out = dir + "/mlp_bf16.out.onnx";
  auto [rtol, atol] = optimize_check_write(m, out);
  std::string a = convert(bf16, dir + "/mlp_bf16.wide.onnx", "--to-float");
  std::string c = convert(out, dir + "/mlp_bf16.out.wide.onnx", "--to-float");
  std::string log;
  EXPECT_EQ(crosscheck(a, c, rtol, atol, &log), 0) << log;
}

// float32 with a float16 stretch (Cast, Sigmoid, Cast): the half-typed Sigmoid and the Casts
// stay opaque, reported by op type, and the written model runs as the original does.
TEST(HalfPrecision, MixedModelKeepsItsHalfNodesExactlyAndReportsThem) {
  std::string dir = scratch_dir("half");
  OnnxBuilder b(13);
  b.input("x", {2, 8});
  b.node("Relu", {"x"}, {"r"});
  OnnxBuilder::attr(b.node("Cast", {"r"}, {"h"}), "to", int64_t{TensorProto::FLOAT16});
  b.node("Sigmoid", {"h"}, {"s"});
  b.node("Sigmoid", {"s"}, {"s2"});
  OnnxBuilder::attr(b.node("Cast", {"s2"}, {"f"}), "to", int64_t{TensorProto::FLOAT});
  b.node("Add", {"f", "x"}, {"y"});
  b.output("y", {2, 8});
  std::string path = b.save(dir + "/mixed.onnx");
  ImportedModel m = import_onnx_file(path);
  EXPECT_EQ(m.info->float_type, TensorProto::FLOAT);
  std::vector<std::string> lines = opaque_summary_lines(m.summary);
  std::string all = fmt::format("{}", fmt::join(lines, "\n"));
  EXPECT_NE(all.find("2 x Sigmoid: an input is FLOAT16"), std::string::npos) << all;

  std::string out = dir + "/mixed.out.onnx";
  export_onnx_file(m.graph, m.info.get(), out);
  onnx::ModelProto written = read_model(out);
  int sigmoids = 0;
  for (const auto& n : written.graph().node()) sigmoids += n.op_type() == "Sigmoid";
  EXPECT_EQ(sigmoids, 2);
  std::string log;
  EXPECT_EQ(crosscheck(path, out, 1e-4, 1e-5, &log), 0) << log;
}

}  // namespace
}  // namespace graphsub
