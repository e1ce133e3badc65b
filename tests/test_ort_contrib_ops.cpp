// --ort-contrib-ops end to end on torch's sequence-first multi-head attention as torch 2.15
// writes it: the chains of reshapes and transposes are written in the rule language before the
// search (opt/transforms/canonical_views.h), whatever the search then chooses is checked (in
// ONNX Runtime too where it holds ONNX Runtime's operators), and the written file computes what
// the original computes in ONNX Runtime. Whether MultiHeadAttention is written depends on this
// machine's cost table, so it is not asserted here (tests/test_opt_rules.cpp asserts that the
// rules find it).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "check/equivalence.h"
#include "driver/data_paths.h"
#include "ort/runtime_compare.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

using testing::OnnxBuilder;
using testing::scratch_dir;

// x [S, B, E] -> q, k, v projections -> Reshape [S, B*H, D] -> Transpose [B*H, S, D] ->
// Reshape [B, H, S, D]; q and k^T times a [1] scale; softmax; times v; Transpose [S, B, H, D]
// -> Reshape [S*B, E] -> output projection.
OnnxBuilder torch_attention(int64_t seq, int64_t batch, int64_t heads, int64_t d) {
  OnnxBuilder b(17);
  const int64_t e = heads * d;
  b.input("x", {seq, batch, e});
  b.init_ints("rows", {seq, batch * heads, d});
  b.init_ints("heads", {batch, heads, seq, d});
  b.init_floats("scale", {1.0f / std::sqrt(std::sqrt(float(d)))}, Shape{1});
  int seed = 3;
  for (const char* n : {"q", "k", "v"}) {
    std::string s = n;
    b.init("w" + s, {e, e}, ++seed);
    b.node("MatMul", {"x", "w" + s}, {s + "_proj"});
    b.node("Reshape", {s + "_proj", "rows"}, {s + "_rows"});
    OnnxBuilder::attr(b.node("Transpose", {s + "_rows"}, {s + "_t"}), "perm",
                      std::vector<int64_t>{1, 0, 2});
    b.node("Reshape", {s + "_t", "heads"}, {s + "_h"});
  }
  OnnxBuilder::attr(b.node("Transpose", {"k_h"}, {"k_ht"}), "perm",
                    std::vector<int64_t>{0, 1, 3, 2});
  b.node("Mul", {"q_h", "scale"}, {"q_s"});
  b.node("Mul", {"k_ht", "scale"}, {"k_s"});
  b.node("MatMul", {"q_s", "k_s"}, {"scores"});
  OnnxBuilder::attr(b.node("Softmax", {"scores"}, {"probs"}), "axis", int64_t{-1});
  b.node("MatMul", {"probs", "v_h"}, {"context"});
  OnnxBuilder::attr(b.node("Transpose", {"context"}, {"context_t"}), "perm",
                    std::vector<int64_t>{2, 0, 1, 3});
  b.init_ints("merged", {seq * batch, e});
  b.node("Reshape", {"context_t", "merged"}, {"context_m"});
  b.init("wo", {e, e}, 9);
  b.node("MatMul", {"context_m", "wo"}, {"y"});
  b.output("y", {seq * batch, e});
  return b;
}

// `graphsub -q optimize IN -o OUT --ort-contrib-ops --guard-runs 0 FLAGS`, its report read back
// (null where the command failed, which is a test failure too).
nlohmann::json optimize_with_contrib_ops(const std::string& in, const std::string& out,
                                         const std::string& dir, const std::string& flags = "") {
  std::string report = out + ".json", log;
  int rc = testing::run_command(
      fmt::format("{} -q optimize {} -o {} --ort-contrib-ops --guard-runs 0 {} {} "
                  "--report-json {} --cache-dir {}/cache",
                  testing::graphsub_bin(), in, out, testing::kSmallSearch, flags, report, dir),
      &log);
  EXPECT_EQ(rc, 0) << log;
  return rc == 0 ? nlohmann::json::parse(std::ifstream(report)) : nlohmann::json();
}

TEST(OrtContribOps, TorchsSequenceFirstAttentionIsReadAndWrittenRight) {
  for (int64_t batch : {2, 1}) {
    std::string dir = scratch_dir("ort_contrib");
    OnnxBuilder b = torch_attention(6, batch, 2, 8);
    std::string in = b.save(fmt::format("{}/torch_attention_{}.onnx", dir, batch));
    std::string out = fmt::format("{}/torch_attention_{}.out.onnx", dir, batch);
    nlohmann::json j = optimize_with_contrib_ops(in, out, dir);
    ASSERT_FALSE(j.is_null());
    EXPECT_EQ(j.at("views").at("chains_canonicalized"), 4) << batch;  // q, k, v, the context
    // A file with ONNX Runtime's own operators was run there against the input first.
    const auto& contrib = j.at("ort_contrib_ops");
    if (!contrib.at("written").empty()) {
      ASSERT_FALSE(contrib.at("checks_in_onnxruntime").empty()) << contrib.dump(2);
      for (const auto& c : contrib.at("checks_in_onnxruntime")) EXPECT_TRUE(c.at("ok").get<bool>());
    }
    ASSERT_TRUE(j.at("check").is_object()) << j.dump(2);
    std::vector<HostTensor<float>> x = {
        {{6, batch, 16}, random_values(6 * batch * 16, 5 + static_cast<uint64_t>(batch))}};
    auto want = testing::ort_run(in, x), got = testing::ort_run(out, x);
    ASSERT_EQ(got.size(), 1u);
    auto d = compare(got[0], want[0], Tolerance{});
    EXPECT_TRUE(d.ok) << batch << ": max abs diff " << d.max_abs;
  }
}

// A chain whose canonical form merges a symbolic batch into another axis ([B, 6, 8] ->
// [B*6, 2, 4] -> [B*6, 4, 2]) cannot be instantiated at the batch's other value (the import
// there recorded the original reshape only): the search runs again without the canonical
// forms, and the file written keeps the batch symbolic and right.
TEST(OrtContribOps, CanonicalFormsThatFixASymbolicBatchAreSearchedAgainWithout) {
  std::string dir = scratch_dir("ort_contrib");
  OnnxBuilder b(17);
  b.input("x", {2, 6, 8});
  OnnxBuilder::symbolic_dim(b.g().mutable_input(0), 0, "batch");
  b.init_ints("rows", {-1, 2, 4});
  b.node("Reshape", {"x", "rows"}, {"r"});
  OnnxBuilder::attr(b.node("Transpose", {"r"}, {"t"}), "perm", std::vector<int64_t>{0, 2, 1});
  b.node("Relu", {"t"}, {"y"});
  b.output_untyped("y");
  std::string in = b.save(dir + "/batch_chain.onnx");
  std::string out = dir + "/batch_chain.out.onnx";
  nlohmann::json j = optimize_with_contrib_ops(in, out, dir);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j.at("views").at("chains_canonicalized"), 0);
  std::string notes = j.at("import").at("notes").dump();
  EXPECT_NE(notes.find("searched again without them"), std::string::npos) << notes;
  auto c = driver::ort_worker_command();
  ort::Worker worker({.interpreter = c.interpreter, .script = c.script});
  for (int64_t batch : {1, 3}) {
    ort::RuntimeComparison r = ort::compare_in_runtime(worker, in, out, {.dim = batch});
    EXPECT_TRUE(r.match) << batch;
  }
}

// A Llama-style block one step into generation: the query's heads rotated (a product with a
// [1, 1, S, D] table), one key/value head appended to its past and repeated for both query
// heads, q and k^T scaled, the mask added, torch's NaN guard after the softmax. With
// `lookup`, a second output reads a[len(b)] of two inputs of symbolic lengths "a" and "t",
// as a decoder reads its position tables at the cache's length: ONNX Runtime runs it only
// where t < a, not with both at one value.
constexpr int64_t kGqaSeq = 4, kGqaPast = 3, kGqaHeads = 2, kGqaHead = 8;

OnnxBuilder grouped_query_block(bool lookup) {
  const int64_t seq = kGqaSeq, past = kGqaPast, d = kGqaHead, e = kGqaHeads * d;
  OnnxBuilder b(17);
  b.input("x", {1, seq, e});
  b.input("cos", {1, 1, seq, d});
  b.input("past_k", {1, 1, past, d});
  b.input("past_v", {1, 1, past, d});
  b.input("mask", {1, 1, seq, past + seq});
  b.init_floats("scale", {1.0f / std::sqrt(std::sqrt(float(d)))}, Shape{1});
  b.init_floats("zero", {0.0f}, Shape{});
  b.init("wq", {e, e}, 4);
  b.init_ints("q_heads", {1, seq, kGqaHeads, d});
  b.node("MatMul", {"x", "wq"}, {"q_proj"});
  b.node("Reshape", {"q_proj", "q_heads"}, {"q_r"});
  OnnxBuilder::attr(b.node("Transpose", {"q_r"}, {"q_h"}), "perm",
                    std::vector<int64_t>{0, 2, 1, 3});
  b.node("Mul", {"q_h", "cos"}, {"q_rot"});
  b.init_ints("kv_heads", {1, seq, 1, d});
  for (const char* n : {"k", "v"}) {
    std::string s = n;
    b.init("w" + s, {e, d}, s == "k" ? 5 : 6);
    b.node("MatMul", {"x", "w" + s}, {s + "_proj"});
    b.node("Reshape", {s + "_proj", "kv_heads"}, {s + "_r"});
    OnnxBuilder::attr(b.node("Transpose", {s + "_r"}, {s + "_h"}), "perm",
                      std::vector<int64_t>{0, 2, 1, 3});
    OnnxBuilder::attr(b.node("Concat", {"past_" + s, s + "_h"}, {s + "_all"}), "axis", int64_t{2});
    OnnxBuilder::attr(b.node("Concat", {s + "_all", s + "_all"}, {s + "_rep"}), "axis", int64_t{1});
  }
  OnnxBuilder::attr(b.node("Transpose", {"k_rep"}, {"k_t"}), "perm",
                    std::vector<int64_t>{0, 1, 3, 2});
  b.node("Mul", {"q_rot", "scale"}, {"q_s"});
  b.node("Mul", {"k_t", "scale"}, {"k_s"});
  b.node("MatMul", {"q_s", "k_s"}, {"scores"});
  b.node("Add", {"scores", "mask"}, {"masked"});
  OnnxBuilder::attr(b.node("Softmax", {"masked"}, {"probs"}), "axis", int64_t{-1});
  b.node("IsNaN", {"probs"}, {"nan"});
  b.node("Where", {"nan", "zero", "probs"}, {"guarded"});
  b.node("MatMul", {"guarded", "v_rep"}, {"context"});
  OnnxBuilder::attr(b.node("Transpose", {"context"}, {"context_t"}), "perm",
                    std::vector<int64_t>{0, 2, 1, 3});
  b.init_ints("merged", {1, seq, e});
  b.node("Reshape", {"context_t", "merged"}, {"y"});
  b.output("y", {1, seq, e});
  if (lookup) {
    b.input("a", {6});
    OnnxBuilder::symbolic_dim(b.g().mutable_input(5), 0, "a");
    b.input("b", {2});
    OnnxBuilder::symbolic_dim(b.g().mutable_input(6), 0, "t");
    b.node("Shape", {"b"}, {"b_len"});
    OnnxBuilder::attr(b.node("Gather", {"a", "b_len"}, {"z"}), "axis", int64_t{0});
    b.output_untyped("z");
  }
  return b;
}

// The rules fuse the block into MultiHeadAttention with the key and value as they are
// ([B, H, L, D]); the file written, fused or not (the cost table decides), computes what the
// original does in ONNX Runtime, and where the search chose MultiHeadAttention it is written,
// checked there: with the lookup, at the values it was imported at (a = 4, t = 2), where the
// input runs.
TEST(OrtContribOps, GroupedQueryAttentionWithAPastIsWrittenRight) {
  for (bool lookup : {false, true}) {
    std::string dir = scratch_dir("ort_contrib");
    std::string in = grouped_query_block(lookup).save(fmt::format("{}/gqa_{}.onnx", dir, lookup));
    std::string out = fmt::format("{}/gqa_{}.out.onnx", dir, lookup);
    nlohmann::json j = optimize_with_contrib_ops(in, out, dir, lookup ? "--dim a=4" : "");
    ASSERT_FALSE(j.is_null());
    // Without the guard, the search's choice is written unless ONNX Runtime's check refuses it.
    const auto& by_op = j.at("graph_ops").at("by_op");
    const bool chosen = by_op.contains("ort_mha") && by_op.at("ort_mha").at("after") > 0;
    const auto& contrib = j.at("ort_contrib_ops");
    if (chosen) {
      EXPECT_TRUE(contrib.at("written").contains("com.microsoft:MultiHeadAttention"))
          << lookup << ": " << j.at("import").at("notes").dump();
      const auto& checks = contrib.at("checks_in_onnxruntime");
      ASSERT_FALSE(checks.empty()) << contrib.dump(2);
      size_t at_imported = 0, not_run = 0;
      for (const auto& c : checks) {
        // Where the input cannot run (every dimension at one value), nothing is compared.
        bool compared = !c.at("ok").is_null();
        EXPECT_TRUE(compared ? c.at("ok").get<bool>() : c.contains("input_cannot_run")) << c.dump();
        not_run += !compared;
        at_imported += compared && c.contains("dims");
      }
      EXPECT_EQ(at_imported, lookup ? 1u : 0u) << checks.dump(2);
      EXPECT_EQ(not_run, lookup ? 2u : 0u) << checks.dump(2);
    }
    // At another length of a; t stays 2, as written (the model does not import at t = 5,
    // a = 4: graphsub writes such a dimension with the value it imported it at).
    auto w = driver::ort_worker_command();
    ort::Worker worker({.interpreter = w.interpreter, .script = w.script});
    ort::RuntimeComparison c =
        ort::compare_in_runtime(worker, in, out, {.dims = {{"a", 5}, {"t", 2}}});
    EXPECT_TRUE(c.match) << lookup << ": " << c.reference_error;
    EXPECT_EQ(c.outputs.size(), lookup ? 2u : 1u);
  }
}

// ONNX Runtime's comparison of two files says where the reference cannot run (the tied
// lengths at one value), and compares them at values it runs at.
TEST(OrtContribOps, AComparisonSaysWhereTheInputCannotRun) {
  std::string dir = scratch_dir("ort_contrib");
  std::string in = grouped_query_block(true).save(dir + "/gqa_compare.onnx");
  auto c = driver::ort_worker_command();
  ort::Worker worker({.interpreter = c.interpreter, .script = c.script});
  ort::RuntimeComparison same = ort::compare_in_runtime(worker, in, in, {.sets = 1, .dim = 5});
  EXPECT_FALSE(same.match);
  EXPECT_TRUE(same.outputs.empty());
  EXPECT_NE(same.reference_error.find("Gather"), std::string::npos) << same.reference_error;
  ort::RuntimeComparison tied =
      ort::compare_in_runtime(worker, in, in, {.sets = 1, .dims = {{"a", 5}, {"t", 3}}});
  EXPECT_TRUE(tied.match) << tied.reference_error;
  EXPECT_TRUE(tied.reference_error.empty());
  ASSERT_EQ(tied.outputs.size(), 2u);
  EXPECT_EQ(tied.outputs[0].max_abs_diff, 0.0);
}

TEST(OrtContribOps, OnlyTheOrtTargetTakesThem) {
  std::string dir = scratch_dir("ort_contrib");
  std::string in = torch_attention(4, 1, 2, 4).save(dir + "/cli.onnx"), log;
  EXPECT_EQ(testing::run_command(fmt::format("{} optimize {} -o /dev/null --target onednn "
                                             "--ort-contrib-ops",
                                             testing::graphsub_bin(), in),
                                 &log),
            1)
      << log;
  EXPECT_NE(log.find("--ort-contrib-ops: "), std::string::npos) << log;
}

}  // namespace
}  // namespace graphsub
