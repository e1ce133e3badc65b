#include "cli/terminal_reporter.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace graphsub {

TerminalReporter::TerminalReporter(bool quiet)
    : live_(!quiet && isatty(STDERR_FILENO)), quiet_(quiet) {}

TerminalReporter::~TerminalReporter() {
  clear_line();
}

void TerminalReporter::clear_line() {
  if (dirty_) {
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
    dirty_ = false;
  }
}

void TerminalReporter::progress(std::string_view stage, double done, double total,
                                std::string_view detail) {
  if (!live_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(100) && done < total) return;  // throttle redraws
  last_ = now;
  std::string pct = total > 0 ? fmt::format(" {:5.1f}%", 100.0 * done / total) : "";
  fmt::print(stderr, "\r\033[K{}:{} {:.0f}{} {}", stage, pct, done,
             total > 0 ? fmt::format("/{:.0f}", total) : "", detail);
  std::fflush(stderr);
  dirty_ = true;
}

void TerminalReporter::info(std::string_view line) {
  clear_line();
  if (!quiet_) fmt::print("{}\n", line);
}

void TerminalReporter::warn(std::string_view line) {
  clear_line();
  fmt::print(stderr, "warning: {}\n", line);
}

}  // namespace graphsub
