// Running out of memory is a clear error with a non-zero exit, never an abort: the generator
// at N = 3 under address-space limits that stop it while it starts its worker threads, while
// it enumerates, and later.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "test_onnx_support.h"

namespace graphsub {
namespace {

using testing::run_command;
using testing::scratch_dir;

// Address-space limits cannot be combined with AddressSanitizer (it reserves terabytes of
// virtual memory at start): the test exists in the plain build only.
#if !defined(GRAPHSUB_ASAN)
TEST(CliMemoryLimit, GeneratorStopsWithAClearErrorUnderEveryLimit) {
  std::string out = scratch_dir("memory_limit") + "/n3.rules";
  std::string gen =
      fmt::format("'{}/graphsub' -q generate --max-ops 3 -o '{}'", GRAPHSUB_BINARY_DIR, out);
  // KiB of address space: too little for worker thread stacks, and too little to enumerate.
  for (int kib : {250000, 350000}) {
    std::string log;
    int rc = run_command(fmt::format("ulimit -v {} && {}", kib, gen), &log);
    EXPECT_EQ(rc, 1) << kib << " KiB: " << log;
    EXPECT_EQ(log.find("terminate"), std::string::npos) << log;
    EXPECT_TRUE(log.find("out of memory") != std::string::npos ||
                log.find("cannot start worker thread") != std::string::npos)
        << kib << " KiB: " << log;
  }
}
#endif

}  // namespace
}  // namespace graphsub
