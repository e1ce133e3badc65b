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

TEST(GenRegenerate, SmallConfigurationReproducesTheCommittedCopy) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("graphsub_gen_small_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string out = (dir / "gen_small.rules").string();
  std::string cmd = std::string("cd '") + GRAPHSUB_SOURCE_DIR + "' && '" + GRAPHSUB_BINARY_DIR +
                    "/graphsub' -q generate " + kSmallFlags + " --threads 2 -o '" + out + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  for (const char* ext : {".rules", ".unproved"}) {
    std::string got = read((dir / (std::string("gen_small") + ext)).string());
    std::string want = read(std::string(GRAPHSUB_SOURCE_DIR) + "/tests/data/gen_small" + ext);
    ASSERT_FALSE(want.empty());
    // The header names the output file; the committed copy was written to tests/data.
    std::string here = "-o " + out;
    auto pos = got.find(here);
    ASSERT_NE(pos, std::string::npos);
    got.replace(pos, here.size(), "-o tests/data/gen_small.rules");
    EXPECT_EQ(got, want) << ext;
  }
  fs::remove_all(dir);
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
