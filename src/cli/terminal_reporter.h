#pragma once
#include <chrono>
#include <string>

#include "ir/report.h"

namespace graphsub {

// Progress on stderr as one self-overwriting line, only when stderr is a terminal and not
// quiet; info lines on stdout; warnings on stderr always.
class TerminalReporter : public Reporter {
 public:
  explicit TerminalReporter(bool quiet);
  ~TerminalReporter() override;
  void progress(std::string_view stage, double done, double total,
                std::string_view detail) override;
  void info(std::string_view line) override;
  void warn(std::string_view line) override;

 private:
  void clear_line();
  bool live_;
  bool quiet_;
  bool dirty_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace graphsub
