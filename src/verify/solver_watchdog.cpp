#include "verify/solver_watchdog.h"

namespace graphsub::verify {

SolverWatchdog::SolverWatchdog(std::chrono::milliseconds period)
    : period_(std::max(period, std::chrono::milliseconds(1))), thread_([this] { run(); }) {}

SolverWatchdog::~SolverWatchdog() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void SolverWatchdog::run() {
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_) {
    stop_cv_.wait_for(lk, period_);
    auto now = Clock::now();
    // Under the lock: a watch cannot end, nor its context go away, while it is interrupted.
    for (auto& [id, e] : running_)
      if (!e.interrupted && now >= e.deadline) {
        e.ctx->interrupt();
        e.interrupted = true;
      }
  }
}

SolverWatchdog::Watch::Watch(SolverWatchdog& w, z3::context& ctx, Clock::time_point deadline)
    : w_(w) {
  std::lock_guard<std::mutex> lk(w_.mu_);
  id_ = w_.next_id_++;
  w_.running_.emplace(id_, Entry{&ctx, deadline});
}

SolverWatchdog::Watch::~Watch() {
  std::lock_guard<std::mutex> lk(w_.mu_);
  w_.running_.erase(id_);
}

bool SolverWatchdog::Watch::interrupted() const {
  std::lock_guard<std::mutex> lk(w_.mu_);
  return w_.running_.at(id_).interrupted;
}

}  // namespace graphsub::verify
