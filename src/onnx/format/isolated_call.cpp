#include "onnx/format/isolated_call.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "core/error.h"

namespace graphsub {

namespace {

bool send_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);  // a dead peer is an error, not SIGPIPE
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Reads exactly n bytes; false on end of file or error. With a deadline, gives up at it
// (timed_out set).
bool read_all(int fd, char* p, size_t n, std::chrono::steady_clock::time_point* deadline,
              bool* timed_out) {
  while (n > 0) {
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        *timed_out = true;
        return false;
      }
      pollfd pfd{fd, POLLIN, 0};
      int r = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return false;
      if (r == 0) continue;  // the loop sees the deadline
    }
    ssize_t got = read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool send_message(int fd, char status, const std::string& bytes) {
  uint64_t size = bytes.size();
  return send_all(fd, &status, 1) && send_all(fd, reinterpret_cast<const char*>(&size), 8) &&
         send_all(fd, bytes.data(), bytes.size());
}

// The child's loop: one request at a time until the parent closes its end.
[[noreturn]] void serve(int fd, const IsolatedServer::Handler& handler) {
  // Die quietly on a crash (no sanitizer or fuzzer report for third-party code); a signal
  // meant for the terminal's process group is the parent's to handle.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, SIG_DFL);
  signal(SIGINT, SIG_IGN);
  for (;;) {
    uint64_t size = 0;
    if (!read_all(fd, reinterpret_cast<char*>(&size), 8, nullptr, nullptr)) _exit(0);
    std::string request(size, '\0');
    if (!read_all(fd, request.data(), size, nullptr, nullptr)) _exit(0);
    char status = 'R';
    std::string reply;
    try {
      reply = handler(request);
    } catch (const std::exception& e) {
      status = 'E';
      reply = e.what();
    } catch (...) {
      status = 'E';
      reply = "unknown exception";
    }
    if (!send_message(fd, status, reply)) _exit(3);
  }
}

}  // namespace

IsolatedServer::~IsolatedServer() {
  std::lock_guard<std::mutex> lock(mu_);
  stop_locked(false);
}

void IsolatedServer::start() {
  std::lock_guard<std::mutex> lock(mu_);
  start_locked();
}

pid_t IsolatedServer::child() const {
  std::lock_guard<std::mutex> lock(mu_);
  return owner_ == getpid() ? pid_ : -1;
}

void IsolatedServer::start_locked() {
  if (pid_ > 0 && owner_ == getpid()) return;
  if (pid_ > 0) {  // inherited by a fork of the owner: its child is not ours to use or reap
    close(fd_);
    pid_ = -1;
    fd_ = -1;
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw Error(fmt::format("isolated call: socketpair failed: {}", std::strerror(errno)));
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    throw Error(fmt::format("isolated call: fork failed: {}", std::strerror(err)));
  }
  if (pid == 0) {
    close(fds[0]);
    serve(fds[1], handler_);
  }
  close(fds[1]);
  pid_ = pid;
  owner_ = getpid();
  fd_ = fds[0];
}

int IsolatedServer::stop_locked(bool kill_child) {
  int st = 0;
  if (pid_ <= 0) return st;
  close(fd_);  // the child sees end of file and exits
  if (owner_ == getpid()) {
    if (kill_child) kill(pid_, SIGKILL);
    while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  fd_ = -1;
  return st;
}

std::string IsolatedServer::call(const std::string& request, const std::string& what,
                                 unsigned timeout_s) {
  std::lock_guard<std::mutex> lock(mu_);
  start_locked();
  uint64_t size = request.size();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool timed_out = false;
  char status = 0;
  bool sent = send_all(fd_, reinterpret_cast<const char*>(&size), 8) &&
              send_all(fd_, request.data(), request.size());
  bool got = sent && read_all(fd_, &status, 1, &deadline, &timed_out) &&
             read_all(fd_, reinterpret_cast<char*>(&size), 8, &deadline, &timed_out);
  std::string reply;
  if (got) {
    reply.resize(size);
    got = read_all(fd_, reply.data(), size, &deadline, &timed_out);
  }
  if (got) {
    if (status == 'E') throw Error(fmt::format("{}: {}", what, reply));
    return reply;
  }
  // The child is gone or stuck: reap it (killed if stuck) and say why; the next call forks a
  // new one.
  int st = stop_locked(timed_out);
  if (timed_out) throw Error(fmt::format("{} did not finish within {} s", what, timeout_s));
  if (WIFSIGNALED(st))
    throw Error(fmt::format("{} crashed ({}); the model is probably malformed", what,
                            strsignal(WTERMSIG(st))));
  throw Error(
      fmt::format("{} failed (exit status {})", what, WIFEXITED(st) ? WEXITSTATUS(st) : -1));
}

}  // namespace graphsub
