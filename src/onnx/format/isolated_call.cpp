#include "onnx/format/isolated_call.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace graphsub {

static bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

std::string run_isolated(const std::function<std::string()>& fn, const std::string& what,
                         unsigned timeout_s) {
  int fds[2];
  if (pipe(fds) != 0) throw Error(fmt::format("{}: pipe failed: {}", what, std::strerror(errno)));
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw Error(fmt::format("{}: fork failed: {}", what, std::strerror(errno)));
  }
  if (pid == 0) {
    // Child: die quietly on a crash (no sanitizer or fuzzer report for third-party code).
    close(fds[0]);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, SIG_DFL);
    alarm(timeout_s);
    char status = 'R';
    std::string out;
    try {
      out = fn();
    } catch (const std::exception& e) {
      status = 'E';
      out = e.what();
    } catch (...) {
      status = 'E';
      out = "unknown exception";
    }
    bool ok = write_all(fds[1], &status, 1) && write_all(fds[1], out.data(), out.size());
    _exit(ok ? 0 : 3);
  }
  close(fds[1]);
  std::string buf;
  char chunk[1 << 16];
  for (;;) {
    ssize_t r = read(fds[0], chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    buf.append(chunk, static_cast<size_t>(r));
  }
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    if (sig == SIGALRM) throw Error(fmt::format("{} did not finish within {} s", what, timeout_s));
    throw Error(
        fmt::format("{} crashed ({}); the model is probably malformed", what, strsignal(sig)));
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || buf.empty())
    throw Error(
        fmt::format("{} failed (exit status {})", what, WIFEXITED(st) ? WEXITSTATUS(st) : -1));
  if (buf[0] == 'E') throw Error(fmt::format("{}: {}", what, buf.substr(1)));
  return buf.substr(1);
}

}  // namespace graphsub
