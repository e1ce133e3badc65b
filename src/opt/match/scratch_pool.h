#pragma once
// Per-thread pools of scratch buffers for the search's inner loops. A buffer leased for one
// call goes back to its thread's pool afterwards and keeps its vectors' storage for the next
// call, so matching and pricing millions of candidates do not allocate. Leases may nest (a
// call made while one is held takes another buffer), so reentrant code stays correct.
#include <memory>
#include <vector>

namespace graphsub::opt {

template <class T>
class ScratchLease {
 public:
  ScratchLease() {
    auto& p = pool();
    if (p.empty()) {
      item_ = std::make_unique<T>();
    } else {
      item_ = std::move(p.back());
      p.pop_back();
    }
  }
  ~ScratchLease() {
    try {
      pool().push_back(std::move(item_));
    } catch (...) {  // out of memory: the buffer is freed instead of pooled
    }
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;

  T& operator*() { return *item_; }
  T* operator->() { return item_.get(); }

 private:
  static std::vector<std::unique_ptr<T>>& pool() {
    thread_local std::vector<std::unique_ptr<T>> p;
    return p;
  }
  std::unique_ptr<T> item_;
};

}  // namespace graphsub::opt
