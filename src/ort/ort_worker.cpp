#include "ort/ort_worker.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/error.h"

extern char** environ;

namespace graphsub::ort {

Worker::Worker(const WorkerOptions& opts) : opts_(opts) {
  if (opts_.script.empty())
    throw Error(
        "ONNX Runtime target: the worker script (tools/) was not found (no data folder: set "
        "GRAPHSUB_DATA_DIR to the folder holding specs/ and tools/)");
  if (!std::filesystem::is_regular_file(opts_.script))
    throw Error(fmt::format("ONNX Runtime target: {} not found", opts_.script));
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) throw Error(fmt::format("pipe: {}", std::strerror(errno)));
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    throw Error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  std::string node = opts_.interpreter, script = opts_.script;
  char* argv[] = {node.data(), script.data(), nullptr};
  int rc = posix_spawnp(&pid_, node.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(in_pipe[0]);
  close(out_pipe[1]);
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  if (rc != 0) {
    pid_ = -1;
    stop();
    throw Error(fmt::format("ONNX Runtime target: cannot start '{}': {}", node, std::strerror(rc)));
  }
  // A worker that dies must not kill graphsub with SIGPIPE on the next write.
  signal(SIGPIPE, SIG_IGN);
  nlohmann::json hello;
  try {
    hello = call({{"op", "hello"}});
    version_ = hello.at("ort").get<std::string>();
    openvino_ = hello.value("openvino", "");
  } catch (const std::exception& e) {
    stop();
    throw Error(fmt::format("ONNX Runtime target: the worker ({} {}) did not start: {}", node,
                            script, e.what()));
  }
  int protocol = hello.value("protocol", 0);
  if (protocol != kWorkerProtocol) {
    stop();
    throw Error(fmt::format(
        "ONNX Runtime target: {} speaks worker protocol {}, this graphsub speaks {} "
        "(docs/ort-worker.md): the binary and its tools/ folder are from different releases",
        script, protocol, kWorkerProtocol));
  }
}

Worker::~Worker() {
  stop();
}

void Worker::stop() {
  if (to_child_ >= 0) {
    if (pid_ > 0) {
      static const char quit[] = "{\"op\":\"quit\"}\n";
      (void)!write(to_child_, quit, sizeof quit - 1);
    }
    close(to_child_);
    to_child_ = -1;
  }
  if (from_child_ >= 0) {
    close(from_child_);
    from_child_ = -1;
  }
  if (pid_ > 0) {
    // Give it a moment to release its sessions, then make sure it is gone.
    for (int i = 0; i < 50; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      usleep(10000);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

std::string Worker::read_line() {
  auto deadline = std::chrono::steady_clock::now() + opts_.reply_timeout;
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      throw Error(fmt::format("ONNX Runtime worker gave no reply within {} s",
                              opts_.reply_timeout.count()));
    pollfd p{from_child_, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) throw Error(fmt::format("poll: {}", std::strerror(errno)));
    if (r <= 0) continue;
    char chunk[65536];
    ssize_t n = read(from_child_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(fmt::format("ONNX Runtime worker ({} {}) {}", opts_.interpreter, opts_.script,
                              how_it_ended()));
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::string Worker::how_it_ended() {
  int status = 0;
  bool reaped = false;
  for (int i = 0; pid_ > 0 && i < 100 && !reaped; ++i) {
    reaped = waitpid(pid_, &status, WNOHANG) == pid_;
    if (!reaped) usleep(10000);
  }
  if (!reaped) return "closed its output (is its ONNX Runtime package installed?)";
  pid_ = -1;
  if (WIFSIGNALED(status))
    return fmt::format("crashed (signal {}, {}): the runtime failed on what it was given",
                       WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("exited with status {} (is its ONNX Runtime package installed?)",
                     WEXITSTATUS(status));
}

nlohmann::json Worker::call(const nlohmann::json& request) {
  if (to_child_ < 0) throw Error("ONNX Runtime worker is not running");
  std::string line = request.dump() + "\n";
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n = write(to_child_, line.data() + off, line.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(fmt::format("ONNX Runtime worker: write failed: {}", std::strerror(errno)));
    off += static_cast<size_t>(n);
  }
  nlohmann::json reply;
  try {
    reply = nlohmann::json::parse(read_line());
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("ONNX Runtime worker sent an unreadable reply: {}", e.what()));
  }
  if (!reply.value("ok", false))
    throw Error(reply.value("error", std::string("ONNX Runtime worker failed")));
  return reply;
}

std::unique_ptr<Worker> try_start_worker(std::string* why_not, const WorkerOptions& opts) {
  try {
    return std::make_unique<Worker>(opts);
  } catch (const Error& e) {
    if (why_not) *why_not = e.what();
    return nullptr;
  }
}

}  // namespace graphsub::ort
