// --ort-contrib-ops: torch's multi-head attention rewritten to ONNX Runtime's com.microsoft
// Attention (ort/ort_attention_fusion.h), checked in ONNX Runtime (ort/runtime_compare.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "driver/data_paths.h"
#include "ort/ort_attention_fusion.h"
#include "ort/runtime_compare.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

using testing::OnnxBuilder;
using testing::scratch_dir;

struct MhaShape {
  int64_t seq = 5, batch = 2, embed = 8, heads = 2;
  bool batch_first = false;  // input [batch, seq, E] transposed first, as torchvision's ViT
};

// The graph torch.onnx.export writes for nn.MultiheadAttention (self-attention, no mask):
// x [seq, batch, E] -> MatMul W [E, 3E] -> Add bias -> Slice Q, K, V on the last axis ->
// Reshape [seq, batch*heads, head] -> Transpose (K to [.., head, seq]) -> Q / sqrt(head) ->
// MatMul -> Softmax -> MatMul V -> Transpose -> Reshape [seq*batch, E] -> y.
OnnxBuilder mha_model(const MhaShape& s) {
  OnnxBuilder b;
  int64_t e = s.embed, d = s.embed / s.heads;
  std::string x = "x";
  if (s.batch_first) {
    b.input("x", {s.batch, s.seq, e});
    OnnxBuilder::attr(b.node("Transpose", {"x"}, {"x_seq"}, "to_seq"), "perm",
                      std::vector<int64_t>{1, 0, 2});
    x = "x_seq";
  } else {
    b.input("x", {s.seq, s.batch, e});
  }
  b.init("w", {e, 3 * e});
  b.init("bias", {3 * e}, 11);
  b.node("MatMul", {x, "w"}, {"proj0"}, "in_proj");
  b.node("Add", {"bias", "proj0"}, {"proj"}, "in_bias");
  b.init_ints("axes", {2});
  b.init_ints("heads_shape", {s.seq, s.batch * s.heads, d});
  const char* names[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    std::string n = names[i];
    b.init_ints(n + "_lo", {i * e});
    b.init_ints(n + "_hi", {i == 2 ? INT64_MAX : (i + 1) * e});
    b.node("Slice", {"proj", n + "_lo", n + "_hi", "axes"}, {n + "_slice"}, n + "_slice");
    b.node("Reshape", {n + "_slice", "heads_shape"}, {n + "_heads"}, n + "_reshape");
    std::vector<int64_t> perm =
        i == 1 ? std::vector<int64_t>{1, 2, 0} : std::vector<int64_t>{1, 0, 2};
    OnnxBuilder::attr(b.node("Transpose", {n + "_heads"}, {n + "_t"}, n + "_transpose"), "perm",
                      perm);
  }
  b.init_floats("sqrt_d", {std::sqrt(float(d))}, Shape{});
  b.node("Div", {"q_t", "sqrt_d"}, {"q_scaled"}, "scale");
  b.node("MatMul", {"q_scaled", "k_t"}, {"scores"}, "scores");
  OnnxBuilder::attr(b.node("Softmax", {"scores"}, {"probs"}, "softmax"), "axis", int64_t{-1});
  b.node("MatMul", {"probs", "v_t"}, {"context"}, "context");
  OnnxBuilder::attr(b.node("Transpose", {"context"}, {"context_t"}, "context_transpose"), "perm",
                    std::vector<int64_t>{1, 0, 2});
  b.init_ints("rows_shape", {s.seq * s.batch, e});
  b.node("Reshape", {"context_t", "rows_shape"}, {"y"}, "rows");
  b.output("y", {s.seq * s.batch, e});
  return b;
}

std::map<std::string, int> op_types(const std::string& bytes) {
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(bytes));
  std::map<std::string, int> n;
  for (const auto& node : m.graph().node())
    ++n[node.domain().empty() ? node.op_type() : node.domain() + ":" + node.op_type()];
  return n;
}

ort::Worker& worker() {
  static ort::Worker w([] {
    ort::WorkerOptions o;
    auto c = driver::ort_worker_command();
    o.interpreter = c.interpreter;
    o.script = c.script;
    return o;
  }());
  return w;
}

std::string save(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

class AttentionShapes : public ::testing::TestWithParam<MhaShape> {};

TEST_P(AttentionShapes, FusedIntoOneAttentionThatComputesTheSameInOnnxRuntime) {
  const MhaShape& s = GetParam();
  std::string original = mha_model(s).bytes();
  AttentionFusion f = fuse_ort_attention(original, "mha");
  ASSERT_EQ(f.sites.size(), 1u);
  EXPECT_NE(f.sites[0].find("2 heads of 4"), std::string::npos) << f.sites[0];
  auto ops = op_types(f.model_bytes);
  EXPECT_EQ(ops["com.microsoft:Attention"], 1);
  // What is left: the transposes around the fused node and the reshapes to the original rows;
  // the input Transpose of the batch-first form is read through, not kept.
  EXPECT_EQ(ops["Softmax"] + ops["Slice"] + ops["MatMul"] + ops["Div"] + ops["Add"], 0);
  EXPECT_EQ(ops["Transpose"], s.batch_first ? 1 : 2);
  onnx::ModelProto fused;
  ASSERT_TRUE(fused.ParseFromString(f.model_bytes));
  bool has_domain = false;
  for (const auto& o : fused.opset_import()) has_domain |= o.domain() == "com.microsoft";
  EXPECT_TRUE(has_domain);
  for (const auto& t : fused.graph().initializer())
    EXPECT_TRUE(t.name() == "w" || t.name() == "bias" || t.name() == "heads_shape" ||
                t.name() == "rows_shape")
        << "unread constant kept: " << t.name();

  std::string dir = scratch_dir("attention_fusion");
  std::string tag = fmt::format("{}{}", s.batch, s.batch_first ? "bf" : "sf");
  ort::RuntimeComparison c =
      ort::compare_in_runtime(worker(), save(dir, "orig" + tag + ".onnx", original),
                              save(dir, "fused" + tag + ".onnx", f.model_bytes), {});
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_TRUE(c.match) << "max abs diff " << c.outputs[0].max_abs_diff;
  EXPECT_GT(c.outputs[0].max_abs_value, 0.1);  // a check that could tell
}

INSTANTIATE_TEST_SUITE_P(OrtAttentionFusion, AttentionShapes,
                         ::testing::Values(MhaShape{}, MhaShape{.batch = 1},
                                           MhaShape{.batch = 3, .batch_first = true}),
                         [](const auto& info) {
                           return fmt::format("batch{}_{}", info.param.batch,
                                              info.param.batch_first ? "first" : "seq_first");
                         });

TEST(OrtAttentionFusion, AnIntermediateReadElsewhereLeavesTheAttentionAlone) {
  OnnxBuilder b = mha_model({});
  b.output_untyped("probs");  // the attention weights are an output too
  AttentionFusion f = fuse_ort_attention(b.bytes(), "mha");
  EXPECT_TRUE(f.sites.empty());
  EXPECT_EQ(f.model_bytes, b.bytes());
}

TEST(OrtAttentionFusion, ProjectionWeightsMustBeConstant) {
  OnnxBuilder b = mha_model({});
  auto* inits = b.g().mutable_initializer();
  for (int i = 0; i < inits->size(); ++i)
    if (inits->Get(i).name() == "w") inits->DeleteSubrange(i, 1);
  b.input("w", {8, 24});
  EXPECT_TRUE(fuse_ort_attention(b.bytes(), "mha").sites.empty());
}

TEST(OrtAttentionFusion, SlicesOutOfOrderAreNotAttention) {
  OnnxBuilder b = mha_model({});
  for (auto& t : *b.g().mutable_initializer())  // K read from V's columns
    if (t.name() == "k_lo") t.set_int64_data(0, 16);
  EXPECT_TRUE(fuse_ort_attention(b.bytes(), "mha").sites.empty());
}

TEST(OrtAttentionFusion, AnotherDomainsOperatorIsNotTakenForItsNamesake) {
  OnnxBuilder b = mha_model({});
  for (auto& n : *b.g().mutable_node())  // a custom op with a "perm" of its own
    if (n.name() == "context_transpose") n.set_domain("com.example");
  EXPECT_TRUE(fuse_ort_attention(b.bytes(), "mha").sites.empty());
}

// ONNX shape inference refuses a model with an operator of a domain it has no opset import
// for; the shapes then come from the declared inputs, and the attention is still found.
TEST(OrtAttentionFusion, AnUnknownOperatorElsewhereDoesNotStopTheFusion) {
  OnnxBuilder b = mha_model({});
  b.node("Custom", {"x"}, {"side"}, "custom").set_domain("com.example");
  b.output_untyped("side");
  EXPECT_EQ(fuse_ort_attention(b.bytes(), "mha").sites.size(), 1u);
}

TEST(OrtAttentionFusion, TheCheckInOnnxRuntimeCatchesAWrongFusion) {
  std::string original = mha_model({}).bytes();
  onnx::ModelProto fused;
  ASSERT_TRUE(fused.ParseFromString(fuse_ort_attention(original, "mha").model_bytes));
  for (auto& n : *fused.mutable_graph()->mutable_node())
    for (auto& a : *n.mutable_attribute())
      if (a.name() == "scale") a.set_f(a.f() * 1.5f);
  std::string dir = scratch_dir("attention_fusion");
  ort::RuntimeComparison c =
      ort::compare_in_runtime(worker(), save(dir, "orig_wrong.onnx", original),
                              save(dir, "fused_wrong.onnx", fused.SerializeAsString()), {});
  EXPECT_FALSE(c.match);
  EXPECT_FALSE(c.outputs.at(0).match);
  EXPECT_GT(c.outputs[0].max_abs_diff, 1e-3);
}

TEST(OrtAttentionFusion, OnlyTheOrtTargetWritesContribOperators) {
  std::string log;
  EXPECT_EQ(testing::run_command(fmt::format("{} optimize {} -o /dev/null --target onednn "
                                             "--ort-contrib-ops",
                                             testing::graphsub_bin(),
                                             save(scratch_dir("attention_fusion"), "cli.onnx",
                                                  mha_model({}).bytes())),
                                 &log),
            1)
      << log;
  EXPECT_NE(log.find("--ort-contrib-ops: ONNX Runtime's own operators are written for "
                     "--target ort only"),
            std::string::npos)
      << log;
}

// The whole job on the multi-head attention form torch's TorchScript exporter wrote before
// scaled_dot_product_attention (torch 1.13; the fusion matches that form only): the sites and
// their check do not depend on timings; whether the fused file is written does (the guard
// times it), and the file must say which.
TEST(OrtAttentionFusion, TheOptimizeJobReportsTheFusionAndWritesWhatItChose) {
  std::string dir = scratch_dir("attention_fusion");
  MhaShape encoder{.seq = 8, .batch = 1, .embed = 64, .heads = 4};
  std::string model = save(dir, "encoder_form.onnx", mha_model(encoder).bytes());
  std::string out = dir + "/encoder.onnx", report = dir + "/encoder.json", log;
  ASSERT_EQ(testing::run_command(fmt::format("{} -q optimize {} -o {} --ort-contrib-ops {} "
                                             "--report-json {} --cache-dir {}/cache",
                                             testing::graphsub_bin(), model, out,
                                             testing::kSmallSearch, report, dir),
                                 &log),
            0)
      << log;
  nlohmann::json j = nlohmann::json::parse(std::ifstream(report));
  const auto& c = j.at("ort_contrib_ops");
  ASSERT_EQ(c.at("sites").size(), 1u) << c.dump(2);
  EXPECT_TRUE(c.at("checks_in_ort").at(0).at("ok").get<bool>());
  EXPECT_EQ(j.at("options").at("ort_contrib_ops"), "true");
  const auto& t = j.at("timings").at("ort_contrib_ops");
  bool written = t.at("written").get<bool>();
  std::string verdict = t.at("verdict");
  int attention = j.at("onnx_ops")
                      .at("by_op")
                      .value("com.microsoft:Attention", nlohmann::json::object())
                      .value("after", 0);
  EXPECT_EQ(attention, written ? 1 : 0) << verdict;
  // Not written, the file is the unfused model, or the input where the latency guard found
  // no rewrite of it faster.
  EXPECT_TRUE(written ? verdict.find("now needs ONNX Runtime") != std::string::npos
                      : verdict.find("unfused model is written") != std::string::npos ||
                            verdict.find("the input is written") != std::string::npos)
      << verdict;
  std::ifstream written_file(out, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(written_file)), {});
  EXPECT_EQ(op_types(bytes)["com.microsoft:Attention"], attention);
}

}  // namespace
}  // namespace graphsub
