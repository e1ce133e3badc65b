#pragma once
// Interrupts Z3 checks that run past their deadline.
//
// Z3's own `timeout` parameter arms a timer for every check: a wake-up of a timer thread and
// back per check, which on these small rules (a fraction of a millisecond each) cost more
// system time than the checks (measured: `graphsub generate --max-ops 3` spent 4 s of system
// time with it, under 1 s with this). One thread here instead looks at the running checks a
// few times per time limit and interrupts those past their deadline; starting and ending a
// watch is a lock and an unlock, with no wake-up.
#include <z3++.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>

namespace graphsub::verify {

class SolverWatchdog {
 public:
  using Clock = std::chrono::steady_clock;
  // `period`: how often running checks are looked at (the deadlines' precision).
  explicit SolverWatchdog(std::chrono::milliseconds period);
  ~SolverWatchdog();
  SolverWatchdog(const SolverWatchdog&) = delete;
  SolverWatchdog& operator=(const SolverWatchdog&) = delete;

  // Watches the checks of `ctx` from construction to destruction: at `deadline`, `ctx` is
  // interrupted (the running check returns unknown, reason "canceled") and interrupted() is
  // true. An interrupted context may stay canceled for later checks: drop it.
  class Watch {
   public:
    Watch(SolverWatchdog& w, z3::context& ctx, Clock::time_point deadline);
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;
    bool interrupted() const;

   private:
    SolverWatchdog& w_;
    uint64_t id_;
  };

 private:
  struct Entry {
    z3::context* ctx;
    Clock::time_point deadline;
    bool interrupted = false;
  };
  void run();

  std::chrono::milliseconds period_;
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  uint64_t next_id_ = 0;
  std::map<uint64_t, Entry> running_;
  std::thread thread_;  // last: started once the rest is ready
};

}  // namespace graphsub::verify
