#pragma once
// graphsub's one thread pool: parallel_for runs body(i, t) for i in [0, n) on `threads`
// worker threads (dynamic scheduling; t is the worker's index, for per-thread state), started
// for the call and joined before it returns. Results must go to per-index slots so that the
// outcome does not depend on scheduling. The calling thread only calls tick(done) about ten
// times a second (progress lines: reporters are not thread-safe, and a tick may throw
// Cancelled). The rule of docs/architecture.md: when a body or the tick throws, the workers
// stop taking items (a long body can ask parallel_stopping()), all are joined, and the first
// exception is rethrown on the calling thread. A worker that cannot be started (memory limit)
// is an Error, after the started ones are stopped and joined.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "core/error.h"

namespace graphsub {

// The machine's hardware threads, at least 1: the worker count where none is asked for.
int hardware_threads();

// True inside a parallel_for body once that loop is stopping (another body or the tick threw):
// a body that runs many steps returns early.
bool parallel_stopping();

namespace detail {
// The stop flag of the loop whose worker this thread is (nullptr outside parallel_for).
void set_parallel_stop_flag(const std::atomic<bool>* flag);
}  // namespace detail

template <class Body, class Tick>
void parallel_for(size_t n, int threads, Body&& body, Tick&& tick) {
  threads = std::max(1, std::min<int>(threads, static_cast<int>(std::max<size_t>(n, 1))));
  std::atomic<size_t> next{0}, done{0};
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  // The calling thread waits for the last worker to finish (woken once, not polling), and
  // ticks in between.
  std::mutex mu;
  std::condition_variable cv;
  int running = threads;
  auto worker = [&](size_t t) {
    detail::set_parallel_stop_flag(&failed);
    try {
      for (size_t i; !failed && (i = next.fetch_add(1)) < n;) {
        body(i, t);
        done.fetch_add(1);
      }
    } catch (...) {
      if (!failed.exchange(true)) error = std::current_exception();
    }
    detail::set_parallel_stop_flag(nullptr);
    std::lock_guard<std::mutex> lk(mu);
    if (--running == 0) cv.notify_one();
  };
  std::vector<std::thread> pool;
  try {
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker, static_cast<size_t>(t));
  } catch (const std::system_error& e) {  // a thread could not start (memory limit, say)
    failed = true;
    for (auto& t : pool) t.join();
    throw Error(
        fmt::format("cannot start worker thread {} of {}: {}", pool.size() + 1, threads, e.what()));
  }
  {
    std::unique_lock<std::mutex> lk(mu);
    while (running > 0) {
      lk.unlock();
      // A tick that throws (Cancelled, say) stops the workers; they are joined before it is
      // rethrown.
      if (!failed) {
        try {
          tick(done.load());
        } catch (...) {
          if (!failed.exchange(true)) error = std::current_exception();
        }
      }
      lk.lock();
      cv.wait_for(lk, std::chrono::milliseconds(100), [&] { return running == 0; });
    }
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

template <class Body>
void parallel_for(size_t n, int threads, Body&& body) {
  parallel_for(n, threads, std::forward<Body>(body), [](size_t) {});
}

}  // namespace graphsub
