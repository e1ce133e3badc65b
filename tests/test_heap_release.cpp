// Handing freed memory back (ir/heap_release.h): pages freed in the middle of the heap, which
// the allocator would keep resident, leave the process.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "ir/heap_release.h"
#include "ir/process_stats.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

TEST(HeapRelease, FreedBlocksBelowALiveOneLeaveTheProcess) {
  // 64 MiB in blocks small enough to come from the heap (not mapped one by one), then a
  // live block above them, so freeing them cannot shrink the heap from its top.
  constexpr size_t kBlock = 32 << 10, kBlocks = 2048;
  std::vector<std::unique_ptr<char[]>> blocks;
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(std::make_unique<char[]>(kBlock));
    std::memset(blocks.back().get(), 1, kBlock);
  }
  auto pin = std::make_unique<char[]>(kBlock);
  std::memset(pin.get(), 2, kBlock);
  blocks.clear();
  const uint64_t before = process_rss_bytes();
  release_free_memory();
  const uint64_t after = process_rss_bytes();
  EXPECT_EQ(pin[kBlock - 1], 2);
  ASSERT_GT(before, 0u);
  if (testing::sanitized()) {              // AddressSanitizer quarantines freed blocks
    EXPECT_LE(after, before + (8 << 20));  // nothing handed back, and nothing broken
    return;
  }
  EXPECT_LE(after + (32 << 20), before) << "resident before " << before << ", after " << after;
}

}  // namespace
}  // namespace graphsub
