#pragma once
// Calls into third-party code that may crash, run in a child process. ONNX's shape inference
// has dereferenced malformed attributes (ONNX 1.12, found by fuzzing: a Conv with a broken
// kernel_shape crashed convPoolShapeInference); in a child, such a crash or a hang becomes an
// Error naming what failed instead of taking graphsub down with it.
//
// One child serves every call, forked once: a fork per call copies the parent's page tables,
// and with a large model loaded (5 GB while a Llama is imported) the importer's thousands of
// calls spent minutes in the kernel. Requests and replies are bytes over a socket; a child
// that crashed or timed out is replaced at the next call. Children are forked by a helper
// process (the zygote) forked at the first start, while the caller is small and, started
// early, has one thread (isolated_call.cpp says why).
#include <sys/types.h>

#include <functional>
#include <mutex>
#include <string>

namespace graphsub {

class IsolatedServer {
 public:
  using Handler = std::function<std::string(const std::string& request)>;
  explicit IsolatedServer(Handler handler) : handler_(std::move(handler)) {}
  ~IsolatedServer();
  IsolatedServer(const IsolatedServer&) = delete;
  IsolatedServer& operator=(const IsolatedServer&) = delete;

  // Forks the child now if none runs: called early, while the process is small, the child
  // shares little memory with it.
  void start();
  // The handler's reply to `request`, computed in the child. Throws Error naming `what` when
  // the handler throws (with its message), when the child crashes or is killed, or after
  // `timeout_s` seconds (the child is then killed).
  std::string call(const std::string& request, const std::string& what, unsigned timeout_s);
  // The child's process id, or -1 when none runs.
  pid_t child() const;

 private:
  void start_locked();
  int stop_locked(bool kill_child);  // the child's wait status (0 when none ran)
  void start_zygote_locked();
  void stop_zygote_locked();
  Handler handler_;
  mutable std::mutex mu_;
  pid_t pid_ = -1;
  pid_t owner_ = -1;  // the process that forked the zygote (a forked copy of us starts its own)
  int fd_ = -1;
  pid_t zygote_pid_ = -1;
  int zygote_fd_ = -1;
};

}  // namespace graphsub
