// Option values that would make an answer meaningless, flags of the other form, and file
// checks before the long run (issue 20, item 7): each is an error naming the flag, the path or
// the limit; and --report-json writes the report.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_onnx_support.h"

namespace graphsub {
namespace {

using testing::graphsub_bin;
using testing::OnnxBuilder;
using testing::run_command;
using testing::scratch_dir;

// x -> Relu -> Relu -> y: small enough that every run here takes a fraction of a second.
std::string relu_model(const std::string& dir) {
  OnnxBuilder b(13);
  b.input("x", {1, 4});
  b.node("Relu", {"x"}, {"r"});
  b.node("Relu", {"r"}, {"y"});
  b.output("y", {1, 4});
  return b.save(dir + "/relu.onnx");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Runs `graphsub optimize MODEL -o OUT FLAGS` in the scratch folder; returns the exit status.
int optimize(const std::string& flags, std::string* log, const std::string& sub = "options") {
  std::string dir = scratch_dir(sub);
  std::string in = relu_model(dir);
  return run_command(fmt::format("{} optimize {} -o {}/out.onnx --cache-dir {}/cache {}",
                                 graphsub_bin(), in, dir, dir, flags),
                     log);
}

void expect_error(const std::string& flags, const std::string& message) {
  std::string log;
  EXPECT_EQ(optimize(flags, &log), 1) << flags << "\n" << log;
  EXPECT_NE(log.find(message), std::string::npos) << flags << "\n" << log;
  // Rejected before the model was read.
  EXPECT_EQ(log.find("imported"), std::string::npos) << flags << "\n" << log;
}

TEST(CliOptions, NanOrOutOfRangeAlphaIsRejected) {
  expect_error("--alpha nan", "--alpha nan: must be a number from 1 to 10");
  expect_error("--alpha 0.5", "--alpha 0.5: must be a number from 1 to 10");
}

TEST(CliOptions, ToleranceMustBeFiniteAndNotNegative) {
  expect_error("--rtol nan", "--rtol nan: must be a finite number, at least 0");
  expect_error("--rtol -0.1", "--rtol -0.1: must be a finite number");
  expect_error("--atol inf", "--atol inf: must be a finite number");
  expect_error("--atol nan", "--atol nan: must be a finite number");
  expect_error("--atol -1", "--atol -1: must be a finite number");
}

TEST(CliOptions, HugeBudgetNeedsATimeLimit) {
  expect_error("--budget 100000000", "without --time-limit the budget is at most 1000000");
  std::string log;
  // With a time limit it runs (this model's search ends long before either bound).
  EXPECT_EQ(optimize("-q --budget 100000000 --time-limit 30", &log), 0) << log;
}

TEST(CliOptions, ThreadsAreBounded) {
  expect_error("--threads 100000", "--threads 100000: at most");
  std::string log;
  EXPECT_EQ(run_command(fmt::format("{} verify --threads 100000 {}/tests/rules/true.rules",
                                    graphsub_bin(), GRAPHSUB_SOURCE_DIR),
                        &log),
            1);
  EXPECT_NE(log.find("--threads 100000: expected 0 (all cores) to"), std::string::npos) << log;
}

TEST(CliOptions, RulesMustBeReadableFiles) {
  std::string dir = scratch_dir("options");
  expect_error(fmt::format("--rules {}", dir),
               fmt::format("--rules {}: cannot read it: it is a folder", dir));
  expect_error(
      fmt::format("--rules {}/none.rules", dir),
      fmt::format("--rules {}/none.rules: cannot open it: No such file or directory", dir));
}

TEST(CliOptions, InputShapeMustNameAnInput) {
  std::string log;
  EXPECT_EQ(optimize("--input-shape nope=1x4", &log), 1) << log;
  EXPECT_NE(
      log.find("--input-shape names 'nope', which is not an input of the model (its inputs: x)"),
      std::string::npos)
      << log;
}

TEST(CliOptions, FlagsOfTheOtherFormAreErrors) {
  expect_error("--dot /tmp/dots", "--dot applies to the built-in models (--model NAME) only");
  expect_error("--runs 3", "--runs applies to the built-in models");
  std::string log;
  EXPECT_EQ(run_command(fmt::format("{} optimize --model demo -o x.onnx", graphsub_bin()), &log),
            1);
  EXPECT_NE(log.find("-o,--output applies to ONNX files only"), std::string::npos) << log;
  EXPECT_EQ(run_command(fmt::format("{} optimize --model demo --check 2", graphsub_bin()), &log),
            1);
  EXPECT_NE(log.find("--check applies to ONNX files only"), std::string::npos) << log;
}

TEST(CliOptions, BothFormsTakeTheCheckTolerance) {
  std::string dir = scratch_dir("options");
  std::string log;
  EXPECT_EQ(run_command(fmt::format("{} optimize --model demo --runs 0 --budget 5 --cache-dir "
                                    "{}/cache --rtol 0.001 --atol 0.0002",
                                    graphsub_bin(), dir),
                        &log),
            0)
      << log;
  EXPECT_NE(log.find("rtol 0.001, atol 0.0002"), std::string::npos) << log;
  EXPECT_EQ(
      run_command(fmt::format("{} optimize --model demo --runs 0 --rtol -1", graphsub_bin()), &log),
      1);
  EXPECT_NE(log.find("--rtol -1: must be a finite number"), std::string::npos) << log;
}

TEST(CliOptions, QuietAfterTheSubcommand) {
  std::string log;
  EXPECT_EQ(optimize("-q", &log), 0) << log;
  EXPECT_EQ(log.find("operator"), std::string::npos) << log;  // no table
  EXPECT_EQ(log.find("wrote"), std::string::npos) << log;
}

TEST(CliOptions, MissingInputSaysWhy) {
  std::string dir = scratch_dir("options"), log;
  EXPECT_EQ(
      run_command(fmt::format("{} optimize {}/missing.onnx -o {}/y.onnx", graphsub_bin(), dir, dir),
                  &log),
      1);
  EXPECT_NE(log.find("cannot open it: No such file or directory"), std::string::npos) << log;
}

TEST(CliOptions, OutputThatIsTheInputUnderAnotherNameIsRefused) {
  std::string dir = scratch_dir("options_same_file");
  std::string in = relu_model(dir), before = read_file(in);
  std::filesystem::remove(dir + "/link.onnx");
  std::filesystem::create_symlink(in, dir + "/link.onnx");
  for (const std::string& out :
       {dir + "/./relu.onnx", dir + "/../options_same_file/relu.onnx", dir + "/link.onnx"}) {
    std::string log;
    EXPECT_EQ(run_command(fmt::format("{} optimize {} -o {}", graphsub_bin(), in, out), &log), 1)
        << out;
    EXPECT_NE(log.find("the output file must differ from the input file"), std::string::npos)
        << log;
  }
  EXPECT_EQ(read_file(in), before);  // the input is untouched
}

TEST(CliOptions, OutputFolderIsCheckedBeforeTheRun) {
  std::string dir = scratch_dir("options"), log;
  EXPECT_EQ(run_command(fmt::format("{} optimize {} -o {}/no/such/folder/out.onnx", graphsub_bin(),
                                    relu_model(dir), dir),
                        &log),
            1);
  EXPECT_NE(log.find("cannot write to -o"), std::string::npos) << log;
  EXPECT_NE(log.find("there is no folder"), std::string::npos) << log;
  EXPECT_EQ(log.find("imported"), std::string::npos) << log;
}

TEST(CliOptions, UnknownTargetListsTheValidOnes) {
  expect_error("--target nope", "--target nope: no such target (valid targets: ort, onednn)");
}

// x -> Conv -> Relu -> Add(., x) -> Relu -> y: the second relu goes (relu of a sum of relus).
std::string conv_model(const std::string& dir) {
  OnnxBuilder b(13);
  b.input("x", {1, 3, 8, 8});
  b.init("w", {3, 3, 3, 3});
  auto& c = b.node("Conv", {"x", "w"}, {"c"});
  OnnxBuilder::attr(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"});
  b.node("Add", {"r", "x"}, {"a"});
  b.node("Relu", {"a"}, {"y"});
  b.output("y", {1, 3, 8, 8});
  return b.save(dir + "/conv.onnx");
}

// `graphsub GLOBAL optimize conv.onnx -o DIR/out.onnx --report-json DIR/report.json FLAGS` with
// a small search and the scratch cache; returns the exit status, the output in *log.
int optimize_conv(const std::string& dir, const std::string& global, const std::string& flags,
                  std::string* log) {
  std::filesystem::remove(dir + "/report.json");
  return run_command(fmt::format("{} {} optimize {} -o {}/out.onnx --report-json {}/report.json "
                                 "{} {} --cache-dir {}/cache",
                                 graphsub_bin(), global, conv_model(dir), dir, dir, flags,
                                 testing::kSmallSearch, dir),
                     log);
}

TEST(CliOptions, ReportJsonHasTheCountsRulesCostsAndCheck) {
  std::string dir = scratch_dir("options_report"), log;
  std::string report = dir + "/report.json";
  // --target onednn: the analytic cost model, so the rules applied do not depend on timings
  // (with the default ort target a loaded machine made the guard write the original back).
  ASSERT_EQ(optimize_conv(dir, "-q", "--check 2 --target onednn", &log), 0) << log;
  auto j = nlohmann::json::parse(read_file(report));
  EXPECT_EQ(j["job"], "onnx");
  EXPECT_EQ(j["onnx_ops"]["before"], 4);
  EXPECT_EQ(j["onnx_ops"]["by_op"]["Relu"]["before"], 2);
  EXPECT_EQ(j["graph_ops"]["before"], 4);
  EXPECT_LT(j["graph_ops"]["after"].get<int>(), 4);
  ASSERT_FALSE(j["rules"]["steps"].empty());
  EXPECT_TRUE(j["rules"]["applied"].contains(j["rules"]["steps"][0]["rule"].get<std::string>()));
  EXPECT_EQ(j["check"]["ok"], true);
  EXPECT_EQ(j["check"]["runs"], 2);
  EXPECT_EQ(j["check"]["outputs"][0]["name"], "y");
  EXPECT_GT(j["cost"]["predicted_before_us"].get<double>(), 0.0);
  EXPECT_LT(j["cost"]["predicted_after_us"].get<double>(),
            j["cost"]["predicted_before_us"].get<double>());
  EXPECT_TRUE(j["timings"].contains("search_s"));
}

TEST(CliOptions, OnnxModelsTargetOnnxRuntimeAndTheGuardTimesTheWrittenModel) {
  std::string dir = scratch_dir("options_guard"), log;
  std::string report = dir + "/report.json";
  ASSERT_EQ(optimize_conv(dir, "", "--guard-runs 5", &log), 0) << log;
  EXPECT_NE(log.find("latency guard: "), std::string::npos) << log;
  auto j = nlohmann::json::parse(read_file(report));
  EXPECT_EQ(j["options"]["target"], "ort");
  EXPECT_EQ(j["cost"]["model"], "ort");
  const auto& g = j["timings"]["guard"];
  // 5 runs asked: all of them, or the first 3 where no file gained in them (racing).
  int runs = g["runs"];
  EXPECT_TRUE(runs == 5 || runs == 3) << runs;
  if (runs == 3) {
    EXPECT_NE(g["verdict"].get<std::string>().find("so the other 2 were not run"),
              std::string::npos)
        << g["verdict"];
  }
  EXPECT_GT(g["original_ms"].get<double>(), 0.0);
  EXPECT_GT(g["control_ms"].get<double>(), 0.0);
  // The conv model has one rewrite, so one candidate at most besides the search's choice.
  ASSERT_GE(g["candidates"].size(), 1u);
  ASSERT_LE(g["candidates"].size(), 3u);
  EXPECT_GT(g["candidates"][0]["predicted_ms"].get<double>(), 0.0);
  EXPECT_GT(g["candidates"][0]["measured_ms"].get<double>(), 0.0);
  EXPECT_GE(g["noise"].get<double>(), 0.05);
  // Whichever file the guard chose was written and its node counts reported.
  std::string written = g["written"];
  EXPECT_TRUE(written == "optimized" || written == "original" || written == "input") << written;
  if (written == "original") {
    EXPECT_EQ(j["onnx_ops"]["after"], 4);
  }
  if (written == "input") {  // nothing measured faster: the input file, as it was
    EXPECT_EQ(j["onnx_ops"]["after"], j["onnx_ops"]["before"]);
  }
}

// --quiet prints nothing on success, whichever file the latency guard chose (its verdict
// once leaked through when the input was written in place of the search's result).
TEST(CliOptions, QuietOptimizePrintsNothingWhateverTheGuardWrites) {
  std::string dir = scratch_dir("options_quiet"), log;
  std::string report = dir + "/report.json";
  ASSERT_EQ(optimize_conv(dir, "--quiet", "--guard-runs 3", &log), 0) << log;
  EXPECT_EQ(log, "");
  auto j = nlohmann::json::parse(read_file(report));
  EXPECT_FALSE(j["timings"]["guard"]["verdict"].get<std::string>().empty());
  EXPECT_TRUE(std::filesystem::exists(dir + "/out.onnx"));
}

TEST(CliOptions, TargetFlagsThatCannotApplyAreErrors) {
  expect_error("--target onednn --guard-runs 5",
               "--guard-runs 5: the latency guard times models in ONNX Runtime (--target ort)");
  expect_error("--target ort --cost measured", "--cost measured: applies to --target onednn");
  expect_error("--guard-runs 2", "--guard-runs 2: expected 0 (no guard) or 3 to 1000");
  expect_error("--guard-candidates 0", "--guard-candidates 0: expected 1 to 16 graphs");
  expect_error("--target onednn --guard-candidates 2",
               "--guard-candidates 2: the latency guard times models in ONNX Runtime");
  std::string log;
  EXPECT_EQ(
      run_command(fmt::format("{} optimize --model squeezenet --target ort", graphsub_bin()), &log),
      1);
  EXPECT_NE(log.find("--target ort: applies to ONNX models"), std::string::npos) << log;
}

TEST(CliOptions, ReportJsonOfABuiltInModelHasItsMeasuredTimes) {
  std::string dir = scratch_dir("options_report"), log;
  std::string report = dir + "/demo.json";
  std::filesystem::remove(report);
  ASSERT_EQ(run_command(fmt::format("{} optimize --model demo --budget 5 --runs 2 --report-json {} "
                                    "--cache-dir {}/cache",
                                    graphsub_bin(), report, dir),
                        &log),
            0)
      << log;
  auto j = nlohmann::json::parse(read_file(report));
  EXPECT_EQ(j["job"], "model");
  EXPECT_EQ(j["options"]["model"], "demo");
  EXPECT_FALSE(j.contains("onnx_ops"));
  EXPECT_EQ(j["timings"]["measured"]["runs"], 2);
  EXPECT_GT(j["timings"]["measured"]["before"]["wall_ms"].get<double>(), 0.0);
  EXPECT_EQ(j["check"]["ok"], true);
}

}  // namespace
}  // namespace graphsub
