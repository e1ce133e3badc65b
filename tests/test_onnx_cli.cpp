// The command line: `graphsub optimize in.onnx -o out.onnx`, the short form, the summary, the
// check (and its failure naming the rule at fault), and clean errors on bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "onnx/onnx_model.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

using testing::graphsub_bin;
using testing::kSmallSearch;
using testing::OnnxBuilder;
using testing::run_command;
using testing::scratch_dir;

// x -> Conv -> Relu -> Add(., x) -> com.example:Opaque -> Relu -> y
std::string model_file(const std::string& dir) {
  OnnxBuilder b(13);
  auto* o = b.m.add_opset_import();
  o->set_domain("com.example");
  o->set_version(1);
  b.input("x", {1, 3, 6, 6});
  b.init("w", {3, 3, 3, 3});
  auto& c = b.node("Conv", {"x", "w"}, {"c"});
  OnnxBuilder::attr(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"});
  b.node("Add", {"r", "x"}, {"a"});
  b.node("Opaque", {"a"}, {"o"}, "mystery").set_domain("com.example");
  b.value_info("o", {1, 3, 6, 6});
  b.node("Relu", {"o"}, {"y"});
  b.output("y", {1, 3, 6, 6});
  return b.save(dir + "/model.onnx");
}

TEST(OnnxCli, OptimizesChecksAndWrites) {
  std::string dir = scratch_dir("cli");
  std::string in = model_file(dir), out = dir + "/model.opt.onnx";
  std::filesystem::remove(out);
  std::string log;
  // --target onednn (analytic costs): what is applied must not depend on timings.
  int rc =
      run_command(fmt::format("{} optimize {} -o {} --check 2 --target onednn {} --cache-dir {}",
                              graphsub_bin(), in, out, kSmallSearch, dir + "/cache"),
                  &log);
  ASSERT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("opaque nodes (1)"), std::string::npos) << log;
  EXPECT_NE(log.find("1 x com.example:Opaque"), std::string::npos) << log;  // grouped by op
  // The relu after the conv is fused (by a generated or a built-in rule: either name).
  EXPECT_EQ(log.find("rules applied: none"), std::string::npos) << log;
  EXPECT_NE(log.find("rules applied: "), std::string::npos) << log;
  EXPECT_NE(log.find("on 2 random input sets"), std::string::npos) << log;
  EXPECT_NE(log.find("regions between 1 opaque node"), std::string::npos) << log;
  EXPECT_NE(log.find("onnx::checker ok"), std::string::npos) << log;
  ImportedModel m = import_onnx_file(out);
  EXPECT_EQ(m.summary.opaque.size(), 1u);
}

// A model graphsub wrote can be optimized again: the written file names the first producer
// once (a second graphsub.source_producer entry was a duplicate key onnx::checker refused).
TEST(OnnxCli, AWrittenModelCanBeOptimizedAgain) {
  std::string dir = scratch_dir("cli");
  OnnxBuilder b(13);
  b.m.set_producer_name("pytorch");
  b.m.set_producer_version("1.13.0");
  b.input("x", {1, 3, 6, 6});
  b.init("w", {3, 3, 3, 3});
  auto& c = b.node("Conv", {"x", "w"}, {"c"});
  OnnxBuilder::attr(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"y"});
  b.output("y", {1, 3, 6, 6});
  std::string in = b.save(dir + "/again.onnx");
  std::string once = dir + "/again.1.onnx", twice = dir + "/again.2.onnx";
  for (const auto& [from, to] : {std::pair{in, once}, std::pair{once, twice}}) {
    std::filesystem::remove(to);
    std::string log;
    int rc = run_command(fmt::format("{} -q optimize {} -o {} --target onednn {} --cache-dir {}",
                                     graphsub_bin(), from, to, kSmallSearch, dir + "/cache"),
                         &log);
    ASSERT_EQ(rc, 0) << from << ": " << log;
  }
  onnx::ModelProto m;
  std::ifstream f(twice, std::ios::binary);
  ASSERT_TRUE(m.ParseFromIstream(&f));
  int entries = 0;
  for (const auto& p : m.metadata_props())
    if (p.key() == "graphsub.source_producer") {
      ++entries;
      EXPECT_EQ(p.value(), "pytorch 1.13.0");
    }
  EXPECT_EQ(entries, 1);
}

// An output that is 0 on every input (zero weights) makes the check compare nothing: the
// summary says so instead of a plain "ok".
TEST(OnnxCli, AnOutputThatIsAlwaysZeroIsFlagged) {
  std::string dir = scratch_dir("cli");
  OnnxBuilder b(13);
  b.input("x", {2, 4});
  b.init_floats("w", std::vector<float>(12, 0.0f), Shape{4, 3});
  b.node("MatMul", {"x", "w"}, {"m"});
  b.node("Relu", {"m"}, {"y"});
  b.node("Relu", {"x"}, {"z"});
  b.output("y", {2, 3});
  b.output("z", {2, 4});
  std::string in = b.save(dir + "/zeros.onnx"), out = dir + "/zeros.opt.onnx", log;
  ASSERT_EQ(run_command(fmt::format("{} optimize {} -o {} --target onednn {} --cache-dir {}",
                                    graphsub_bin(), in, out, kSmallSearch, dir + "/cache"),
                        &log),
            0)
      << log;
  EXPECT_NE(log.find("the original's 'y' is 0 on every input set"), std::string::npos) << log;
  EXPECT_EQ(log.find("the original's 'z'"), std::string::npos) << log;  // relu(x) varies
}

TEST(OnnxCli, ShortFormAndQuiet) {
  std::string dir = scratch_dir("cli");
  std::string in = model_file(dir), out = dir + "/short.onnx";
  std::filesystem::remove(out);
  std::string log;
  int rc = run_command(fmt::format("{} -q {} {} {} --cache-dir {}", graphsub_bin(), in, out,
                                   kSmallSearch, dir + "/cache"),
                       &log);
  EXPECT_EQ(rc, 0) << log;
  EXPECT_TRUE(std::filesystem::exists(out));
  EXPECT_EQ(log.find("operator"), std::string::npos) << log;  // quiet: no table
}

TEST(OnnxCli, SameInputAndFlagsGiveTheSameBytes) {
  // A directory of its own: the other tests' runs write measured timings into "cli/cache",
  // and when CTest runs one beside this test its timings could change this test's second run.
  std::string dir = scratch_dir("cli_same_bytes");
  std::string in = model_file(dir), a = dir + "/det_a.onnx", b = dir + "/det_b.onnx", log;
  for (const auto& out : {a, b})
    // --guard-runs 0: the ort target's costs come from the cached table after the first run;
    // the guard's end-to-end timing could choose differently on a loaded machine.
    ASSERT_EQ(run_command(fmt::format("{} -q optimize {} -o {} --guard-runs 0 {} --cache-dir {}",
                                      graphsub_bin(), in, out, kSmallSearch, dir + "/cache"),
                          &log),
              0)
        << log;
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  std::string ba((std::istreambuf_iterator<char>(fa)), {}),
      bb((std::istreambuf_iterator<char>(fb)), {});
  EXPECT_FALSE(ba.empty());
  EXPECT_EQ(ba, bb);
}

TEST(OnnxCli, AnUnsoundRuleIsCaughtAndNamed) {
  std::string dir = scratch_dir("cli");
  std::string rules = dir + "/unsound.rules";
  std::ofstream(rules)
      << "(rule drop-addend \"x + y is not x\" (source (ewadd ?x ?y)) (target ?x))\n";
  std::string in = model_file(dir), out = dir + "/bad.onnx";
  std::filesystem::remove(out);
  std::string log;
  int rc = run_command(fmt::format("{} optimize {} -o {} --rules {} --cache-dir {}", graphsub_bin(),
                                   in, out, rules, dir + "/cache"),
                       &log);
  EXPECT_EQ(rc, 1) << log;
  EXPECT_NE(log.find("MISMATCH"), std::string::npos) << log;
  EXPECT_NE(log.find("--disable-rule drop-addend"), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(out));  // nothing written
}

TEST(OnnxCli, BadInputFailsWithAMessage) {
  std::string dir = scratch_dir("cli");
  std::string garbage = dir + "/garbage.onnx";
  std::ofstream(garbage) << "definitely not a model";
  std::string log;
  EXPECT_EQ(
      run_command(fmt::format("{} optimize {} -o {}/x.onnx", graphsub_bin(), garbage, dir), &log),
      1);
  EXPECT_NE(log.find("error: "), std::string::npos) << log;
  EXPECT_NE(log.find("not a valid ONNX model"), std::string::npos) << log;
  EXPECT_EQ(run_command(fmt::format("{} optimize {}", graphsub_bin(), model_file(dir)), &log), 1);
  EXPECT_NE(log.find("-o OUT.onnx"), std::string::npos) << log;
  EXPECT_EQ(
      run_command(fmt::format("{} optimize {}/missing.onnx -o {}/y.onnx", graphsub_bin(), dir, dir),
                  &log),
      1);
  EXPECT_NE(log.find("cannot open"), std::string::npos) << log;
}

TEST(OnnxCli, ExportsBuiltInModels) {
  std::string dir = scratch_dir("cli");
  std::string out = dir + "/demo.onnx", log;
  ASSERT_EQ(
      run_command(fmt::format("{} export-onnx --model demo -o {}", graphsub_bin(), out), &log), 0)
      << log;
  ImportedModel m = import_onnx_file(out);
  EXPECT_TRUE(m.summary.opaque.empty());
  EXPECT_GE(m.graph.num_ops(), 7u);
}

}  // namespace
}  // namespace graphsub
