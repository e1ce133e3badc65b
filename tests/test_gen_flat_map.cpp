// The enumerator's hash table (gen/space/flat_map.h): every key found after the table grows,
// tables filled to 4/5 before they double, and the slots of the two tables every rank holds
// at their packed sizes (docs/distributed.md: memory per rank).
#include <gtest/gtest.h>

#include "gen/enumerate/enumerator.h"
#include "gen/space/flat_map.h"

namespace graphsub::gen {
namespace {

TEST(GenFlatMap, FillsToFourFifthsBeforeDoubling) {
  FlatMap64 m;
  EXPECT_EQ(m.capacity(), 64u);
  for (uint64_t k = 1; k <= 51; ++k) m.insert(k * 0x9E3779B97F4A7C15ull, static_cast<uint32_t>(k));
  EXPECT_EQ(m.capacity(), 64u);  // 51 of 64: still under 4/5
  m.insert(52 * 0x9E3779B97F4A7C15ull, 52);
  EXPECT_EQ(m.capacity(), 128u);
  for (uint64_t k = 53; k <= 100000; ++k)
    m.insert(k * 0x9E3779B97F4A7C15ull, static_cast<uint32_t>(k));
  EXPECT_EQ(m.size(), 100000u);
  EXPECT_EQ(m.capacity(), 131072u);  // 100,000 of 131,072: 0.76
  for (uint64_t k = 1; k <= 100000; ++k) {
    const uint32_t* v = m.find(k * 0x9E3779B97F4A7C15ull);
    ASSERT_NE(v, nullptr) << k;
    EXPECT_EQ(*v, k);
  }
  for (uint64_t k = 100001; k <= 101000; ++k) EXPECT_EQ(m.find(k * 0x9E3779B97F4A7C15ull), nullptr);
}

TEST(GenFlatMap, RepresentativesKeepTheirValuesInPackedSlots) {
  static_assert(sizeof(ValueRep) == 12);
  ValueReps reps;
  for (uint64_t h = 1; h <= 5000; ++h) keep_smaller_rep(reps, h, ValueRep{3, h * 7});
  for (uint64_t h = 1; h <= 5000; h += 2) keep_smaller_rep(reps, h, ValueRep{2, h});
  for (uint64_t h = 1; h <= 5000; h += 3) keep_smaller_rep(reps, h, ValueRep{4, 0});  // larger
  for (uint64_t h = 1; h <= 5000; ++h) {
    const ValueRep* r = reps.find(h);
    ASSERT_NE(r, nullptr);
    // Copied out: the packed fields may not be bound to references (EXPECT_EQ takes them so).
    const uint32_t ops = r->ops;
    const uint64_t term = r->term;
    EXPECT_EQ(ops, h % 2 ? 2u : 3u);
    EXPECT_EQ(term, h % 2 ? h : h * 7);
  }
}

}  // namespace
}  // namespace graphsub::gen
