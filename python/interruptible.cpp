#include "interruptible.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace py = pybind11;

namespace graphsub::python {

namespace {

struct ProgressState {
  std::string stage, detail;
  double done = 0, total = 0;
};

// Thread-safe: progress() is called from the job's threads, take() and cancel() from Python's.
class JobReporter : public Reporter {
 public:
  void progress(std::string_view stage, double done, double total,
                std::string_view detail) override {
    if (cancelled_) throw Cancelled();
    std::lock_guard<std::mutex> lk(mu_);
    latest_ = ProgressState{std::string(stage), std::string(detail), done, total};
  }
  void warn(std::string_view line) override {
    std::lock_guard<std::mutex> lk(mu_);
    warnings_.emplace_back(line);
  }
  void cancel() { cancelled_ = true; }
  // The progress recorded since the last call, if any.
  std::optional<ProgressState> take() {
    std::lock_guard<std::mutex> lk(mu_);
    std::optional<ProgressState> s = std::move(latest_);
    latest_.reset();
    return s;
  }
  std::vector<std::string> warnings() {
    std::lock_guard<std::mutex> lk(mu_);
    return warnings_;
  }

 private:
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  std::optional<ProgressState> latest_;
  std::vector<std::string> warnings_;
};

}  // namespace

void run_interruptible(const std::function<void(Reporter&)>& job, const py::object& progress) {
  JobReporter rep;
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      job(rep);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lk(mu);
    finished = true;
    cv.notify_all();
  });
  auto cancel_and_join = [&] {
    rep.cancel();
    py::gil_scoped_release nogil;
    worker.join();
  };
  for (;;) {
    bool done = false;
    {
      py::gil_scoped_release nogil;
      std::unique_lock<std::mutex> lk(mu);
      done = cv.wait_for(lk, std::chrono::milliseconds(50), [&] { return finished; });
    }
    if (done) break;
    if (PyErr_CheckSignals() != 0) {  // Ctrl-C: KeyboardInterrupt is now set
      py::error_already_set e;
      cancel_and_join();
      throw e;
    }
    if (progress.is_none()) continue;
    if (auto s = rep.take()) {
      try {
        progress(s->stage, s->done, s->total, s->detail);
      } catch (...) {
        cancel_and_join();
        throw;
      }
    }
  }
  {
    py::gil_scoped_release nogil;
    worker.join();
  }
  for (const auto& w : rep.warnings())
    if (PyErr_WarnEx(PyExc_UserWarning, w.c_str(), 1) != 0) throw py::error_already_set();
  if (error) std::rethrow_exception(error);
}

}  // namespace graphsub::python
