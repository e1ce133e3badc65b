#include "ir/parallel.h"

namespace graphsub {

namespace {
thread_local const std::atomic<bool>* stop_flag = nullptr;
}  // namespace

int hardware_threads() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

bool parallel_stopping() {
  return stop_flag && stop_flag->load();
}

namespace detail {
void set_parallel_stop_flag(const std::atomic<bool>* flag) {
  stop_flag = flag;
}
}  // namespace detail

}  // namespace graphsub
