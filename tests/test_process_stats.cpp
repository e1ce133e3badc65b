// The one reader of process statistics (ir/process_stats.h): peak memory follows what the
// process touched, resident memory what it holds now, processor time only grows.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>
#include <memory>

#include "ir/process_stats.h"

namespace graphsub {
namespace {

TEST(ProcessStats, PeakMemoryCoversWhatWasTouched) {
  constexpr size_t kBytes = 64 << 20;
  auto block = std::make_unique<char[]>(kBytes);
  std::memset(block.get(), 1, kBytes);  // resident now
  uint64_t peak = process_peak_rss_bytes();
  EXPECT_GE(peak, kBytes);
  EXPECT_EQ(block[kBytes - 1], 1);
  EXPECT_GE(process_peak_rss_mib(), 64.0);
  // A high-water mark: freeing does not lower it.
  block.reset();
  EXPECT_GE(process_peak_rss_bytes(), peak);
}

TEST(ProcessStats, ResidentMemoryFollowsWhatIsTouched) {
  // Mapped directly, not through the allocator, whose free pages earlier tests may have left
  // resident (a block from them would not add to the process).
  constexpr size_t kBytes = 256 << 20;
  const uint64_t before = process_rss_bytes();
  void* p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::memset(p, 1, kBytes);
  const uint64_t held = process_rss_bytes();
  EXPECT_GE(held, before + kBytes / 2);
  ASSERT_EQ(munmap(p, kBytes), 0);
  EXPECT_LE(process_rss_bytes() + kBytes / 2, held);
}

TEST(ProcessStats, ProcessorTimeOnlyGrows) {
  double a = process_cpu_seconds();
  volatile double sink = 0;
  for (int i = 0; i < 1000000; ++i) sink = sink + i;
  double b = process_cpu_seconds();
  EXPECT_GT(a, 0);
  EXPECT_GE(b, a);
}

}  // namespace
}  // namespace graphsub
