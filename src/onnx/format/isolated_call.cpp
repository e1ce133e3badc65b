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

// The zygote: forked at the first start, while the caller is small and (started early) has one
// thread, it forks every worker. A fork from a process with other threads copies whatever
// locks they hold at that instant, and a child that then takes one waits forever (POSIX
// allows a forked child of a threaded process only async-signal-safe calls); the zygote runs
// no other thread and no third-party code, so its forks are clean however many threads the
// caller runs by then. Its forks are also cheap: a replacement for a crashed child no longer
// copies the page tables of a caller that has since loaded a large model.
//   'F'        -> pid (4 bytes), with the worker's socket end attached (SCM_RIGHTS)
//   'W' + pid  -> the worker's wait status (4 bytes), once it has exited
bool send_pid_and_fd(int fd, int32_t pid, int passed) {
  char buf[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&pid, sizeof pid};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (passed >= 0) {
    msg.msg_control = buf;
    msg.msg_controllen = sizeof buf;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &passed, sizeof(int));
  }
  for (;;) {
    ssize_t w = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    return w == static_cast<ssize_t>(sizeof pid);
  }
}

// The worker's pid and socket from the zygote; false when the zygote is gone or could not fork.
bool recv_pid_and_fd(int fd, pid_t* pid, int* got) {
  int32_t p = -1;
  char buf[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&p, sizeof p};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = buf;
  msg.msg_controllen = sizeof buf;
  ssize_t r;
  while ((r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  *got = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); r > 0 && c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      std::memcpy(got, CMSG_DATA(c), sizeof(int));
  *pid = p;
  if (r != static_cast<ssize_t>(sizeof p) || p <= 0 || *got < 0) {
    if (*got >= 0) close(*got);
    return false;
  }
  return true;
}

[[noreturn]] void zygote(int fd, const IsolatedServer::Handler& handler) {
  signal(SIGINT, SIG_IGN);  // the terminal's interrupt is the parent's to handle
  for (;;) {
    char op = 0;
    if (!read_all(fd, &op, 1, nullptr, nullptr)) _exit(0);  // the parent is done
    if (op == 'F') {
      int w[2] = {-1, -1};
      pid_t pid = -1;
      if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, w) == 0) {
        pid = fork();
        if (pid == 0) {
          close(fd);
          close(w[0]);
          serve(w[1], handler);
        }
        close(w[1]);
      }
      bool sent = send_pid_and_fd(fd, pid > 0 ? pid : -1, pid > 0 ? w[0] : -1);
      if (w[0] >= 0) close(w[0]);  // the parent's end now, or unused when the fork failed
      if (!sent) _exit(0);
    } else if (op == 'W') {
      int32_t pid = 0;
      int st = 0;
      if (!read_all(fd, reinterpret_cast<char*>(&pid), sizeof pid, nullptr, nullptr)) _exit(0);
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      int32_t status = st;
      if (!send_all(fd, reinterpret_cast<const char*>(&status), sizeof status)) _exit(0);
    } else {
      _exit(4);
    }
  }
}

}  // namespace

IsolatedServer::~IsolatedServer() {
  std::lock_guard<std::mutex> lock(mu_);
  stop_locked(false);
  if (owner_ == getpid()) stop_zygote_locked();
}

void IsolatedServer::start() {
  std::lock_guard<std::mutex> lock(mu_);
  start_locked();
}

pid_t IsolatedServer::child() const {
  std::lock_guard<std::mutex> lock(mu_);
  return owner_ == getpid() ? pid_ : -1;
}

void IsolatedServer::start_zygote_locked() {
  if (zygote_pid_ > 0 && owner_ == getpid()) return;
  if (zygote_pid_ > 0 || pid_ > 0) {  // inherited by a fork of the owner: not ours to use or reap
    if (fd_ >= 0) close(fd_);
    if (zygote_fd_ >= 0) close(zygote_fd_);
    pid_ = zygote_pid_ = -1;
    fd_ = zygote_fd_ = -1;
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
    zygote(fds[1], handler_);
  }
  close(fds[1]);
  zygote_pid_ = pid;
  owner_ = getpid();
  zygote_fd_ = fds[0];
}

void IsolatedServer::stop_zygote_locked() {
  if (zygote_pid_ <= 0) return;
  close(zygote_fd_);  // the zygote sees end of file and exits
  while (waitpid(zygote_pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  zygote_pid_ = -1;
  zygote_fd_ = -1;
}

void IsolatedServer::start_locked() {
  start_zygote_locked();
  if (pid_ > 0) return;
  for (int attempt = 0; attempt < 2; ++attempt) {
    char op = 'F';
    if (send_all(zygote_fd_, &op, 1) && recv_pid_and_fd(zygote_fd_, &pid_, &fd_)) return;
    pid_ = -1;
    // The zygote is gone (killed, or it could not fork): a new one, once.
    stop_zygote_locked();
    if (attempt == 0) start_zygote_locked();
  }
  throw Error("isolated call: the helper process could not start a child");
}

int IsolatedServer::stop_locked(bool kill_child) {
  int st = 0;
  if (pid_ <= 0) return st;
  close(fd_);  // the child sees end of file and exits
  if (owner_ == getpid()) {
    if (kill_child) kill(pid_, SIGKILL);
    // The zygote forked it, so the zygote reaps it and says how it ended.
    char req[1 + sizeof(int32_t)] = {'W'};
    int32_t pid = pid_, status = 0;
    std::memcpy(req + 1, &pid, sizeof pid);
    bool timed_out = false;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    if (send_all(zygote_fd_, req, sizeof req) &&
        read_all(zygote_fd_, reinterpret_cast<char*>(&status), sizeof status, &deadline,
                 &timed_out))
      st = status;
    else
      stop_zygote_locked();  // a zygote that does not answer is replaced at the next call
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
