// graphsub's one thread pool (ir/parallel.h): every index runs once, whatever the threads;
// the tick runs on the calling thread; a body's exception or a tick's Cancelled stops the
// workers and is rethrown on the calling thread.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ir/parallel.h"
#include "ir/report.h"

namespace graphsub {
namespace {

// Waits until the loop stops: a body that would otherwise run on forever.
void wait_for_stop() {
  while (!parallel_stopping()) std::this_thread::yield();
}

TEST(Parallel, EveryIndexRunsOnceOnTheWorkers) {
  for (int threads : {1, 3, 8}) {
    std::vector<int> runs(1000, 0);
    std::vector<std::atomic<int>> by_worker(static_cast<size_t>(threads));
    parallel_for(runs.size(), threads, [&](size_t i, size_t t) {
      ++runs[i];
      ++by_worker[t];
    });
    for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i], 1) << i << ", " << threads;
    int total = 0;
    for (auto& w : by_worker) total += w;
    EXPECT_EQ(total, 1000);
  }
  parallel_for(0, 4, [](size_t, size_t) { FAIL() << "no index to run"; });
}

TEST(Parallel, TheTickRunsOnTheCallingThread) {
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> ticked_elsewhere{false};
  std::atomic<int> ticks{0};
  parallel_for(
      4, 2,
      [&](size_t, size_t) {
        // Keep the workers busy until the caller has ticked at least once.
        while (ticks.load() == 0) std::this_thread::yield();
        EXPECT_NE(std::this_thread::get_id(), caller);
      },
      [&](size_t) {
        if (std::this_thread::get_id() != caller) ticked_elsewhere = true;
        ++ticks;
      });
  EXPECT_GT(ticks.load(), 0);
  EXPECT_FALSE(ticked_elsewhere);
}

TEST(Parallel, ABodysExceptionStopsTheWorkersAndReachesTheCaller) {
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_for(1000, 4,
                            [&](size_t i, size_t) {
                              if (i == 0) throw std::runtime_error("item 0 fails");
                              wait_for_stop();
                              ++ran;
                            }),
               std::runtime_error);
  // Each of the other three workers finished the item it held, and took no other.
  EXPECT_LE(ran.load(), 3);
  EXPECT_FALSE(parallel_stopping());  // outside a loop
}

TEST(Parallel, ACancelledTickStopsTheWorkersAndReachesTheCaller) {
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_for(
                   1000, 4,
                   [&](size_t, size_t) {
                     wait_for_stop();
                     ++ran;
                   },
                   [](size_t) { throw Cancelled(); }),
               Cancelled);
  EXPECT_LE(ran.load(), 4);
}

TEST(Parallel, HardwareThreadsAreAtLeastOne) {
  EXPECT_GE(hardware_threads(), 1);
}

}  // namespace
}  // namespace graphsub
