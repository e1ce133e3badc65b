// A small configuration of the generator, run through the real command (Z3 verifier
// included), reproduces the committed copy tests/data/gen_small.rules (and its report of
// unproved candidates) byte for byte; with a resource limit low enough to stop some proofs, the
// library is still the same on one thread and on two.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace graphsub {
namespace {

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace
}  // namespace graphsub

namespace graphsub {
namespace {

// The command that produced tests/data/gen_small.rules (its header says so too).
const char* kSmallFlags =
    "--max-ops 3 --ops matmul,transpose,relu,concat,split,ewadd --params act=none,relu "
    "--params axis=0,1 --pool x1:2x4:data,x2:2x4:data,w1:4x4:weight,w2:4x4:weight";

// Runs `graphsub SUBCOMMAND FLAGS` (generate or unfold) from the source tree into a scratch
// folder and checks that each of `exts` (".rules", ".unproved") equals the committed copy
// `committed` (a path below the source tree, without extension), the output name in the header
// read as `committed`.
void expect_regenerated(const std::string& flags, const std::string& committed,
                        std::initializer_list<const char*> exts,
                        const std::string& subcommand = "generate") {
  namespace fs = std::filesystem;
  std::string stem = fs::path(committed).filename().string();
  fs::path dir =
      fs::temp_directory_path() / ("graphsub_regen_" + stem + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string out = (dir / (stem + ".rules")).string();
  std::string cmd = std::string("cd '") + GRAPHSUB_SOURCE_DIR + "' && '" + GRAPHSUB_BINARY_DIR +
                    "/graphsub' -q " + subcommand + " " + flags + " --threads 2 -o '" + out + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  for (const char* ext : exts) {
    std::string got = read((dir / (stem + ext)).string());
    std::string want = read(std::string(GRAPHSUB_SOURCE_DIR) + "/" + committed + ext);
    ASSERT_FALSE(want.empty()) << committed << ext;
    std::string here = "-o " + out;
    auto pos = got.find(here);
    ASSERT_NE(pos, std::string::npos);
    got.replace(pos, here.size(), "-o " + committed + ".rules");
    EXPECT_EQ(got, want) << committed << ext;
  }
  fs::remove_all(dir);
}

TEST(GenRegenerate, SmallConfigurationReproducesTheCommittedCopy) {
  expect_regenerated(kSmallFlags, "tests/data/gen_small", {".rules", ".unproved"});
}

// The shipped library `stem` (rules/NAME) is what the `graphsub SUBCOMMAND` command in its
// own header writes, byte for byte.
void expect_library_reproduces(const std::string& stem, const std::string& subcommand) {
  std::string text = read(std::string(GRAPHSUB_SOURCE_DIR) + "/" + stem + ".rules");
  std::string line = text.substr(0, text.find('\n', text.find('\n') + 1));
  const std::string command = "graphsub " + subcommand + " ";
  auto at = line.find(command);
  ASSERT_NE(at, std::string::npos) << line;
  std::string flags = line.substr(at + command.size());
  auto o = flags.find(" -o " + stem + ".rules");
  ASSERT_NE(o, std::string::npos) << flags;
  flags.resize(o);
  expect_regenerated(flags, stem, {".rules"}, subcommand);
}

TEST(GenRegenerate, TheOrtFusedLibraryReproducesFromItsHeader) {
  expect_library_reproduces("rules/ort_fused", "generate");
}

// Unfolded from MultiHeadAttention's definition (`graphsub unfold`), not enumerated.
TEST(GenRegenerate, TheOrtAttentionLibraryReproducesFromItsHeader) {
  expect_library_reproduces("rules/ort_attention", "unfold");
}

TEST(GenRegenerate, TheOnnxAttentionLibraryReproducesFromItsHeader) {
  expect_library_reproduces("rules/onnx_attention", "unfold");
}

// Every fused operator the library is generated for (--with-ops in its header) is introduced
// by at least one of its rules: an operator the enumerator cannot apply (three tensor inputs
// once, a skip normalization's unread sum) would leave the list with no rule and no error.
TEST(GenRegenerate, EveryFusedOperatorOfTheOrtLibraryHasARule) {
  std::string text = read(std::string(GRAPHSUB_SOURCE_DIR) + "/rules/ort_fused.rules");
  const std::string flag = "--with-ops ";
  auto at = text.find(flag);
  ASSERT_NE(at, std::string::npos);
  std::string list =
      text.substr(at + flag.size(), text.find(' ', at + flag.size()) - at - flag.size());
  std::string body = text.substr(text.find("(equality"));
  int ops = 0;
  for (size_t b = 0, e; b < list.size(); b = e + 1) {
    e = std::min(list.find(',', b), list.size());
    std::string op = list.substr(b, e - b);
    ++ops;
    EXPECT_NE(body.find("(" + op + " "), std::string::npos) << op << " is in no rule";
  }
  EXPECT_GE(ops, 7);
  EXPECT_NE(body.find("(ort_skip_layernorm ?p_eps ?a ?b ?c)"), std::string::npos);
}

// The prover is bounded by Z3's resource count, not by time: where the limit stops proofs
// (--rlimit 400 stops some), what it stops does not depend on threads or timing.
TEST(GenRegenerate, AResourceLimitThatStopsProofsStopsTheSameOnesOnAnyThreads) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("graphsub_gen_rlimit_" + std::to_string(::getpid()));
  std::string got[2][2];
  for (int threads : {1, 2}) {
    fs::path sub = dir / std::to_string(threads);
    fs::create_directories(sub);
    // Same output name in both folders, so that the headers agree too.
    std::string cmd = "cd '" + sub.string() + "' && '" + GRAPHSUB_BINARY_DIR +
                      "/graphsub' -q generate " + kSmallFlags + " --axioms '" +
                      GRAPHSUB_SOURCE_DIR + "/specs/operators.axioms' --rlimit 400 --threads " +
                      std::to_string(threads) + " -o small.rules";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    got[threads - 1][0] = read((sub / "small.rules").string());
    got[threads - 1][1] = read((sub / "small.unproved").string());
  }
  EXPECT_NE(got[0][1].find("no proof within the resource limit 400"), std::string::npos);
  EXPECT_NE(got[0][0].find("(equality r-"), std::string::npos);
  EXPECT_EQ(got[0][0], got[1][0]);
  EXPECT_EQ(got[0][1], got[1][1]);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace graphsub
