#pragma once
// The only way stages below the command line talk to the user: a Reporter. The command line
// supplies one that draws a progress line on a terminal (quiet otherwise, or with --quiet).
#include <string_view>

namespace graphsub {

class Reporter {
 public:
  virtual ~Reporter() = default;
  // done/total of a long stage; total 0 when unknown.
  virtual void progress(std::string_view /*stage*/, double /*done*/, double /*total*/,
                        std::string_view /*detail*/ = {}) {}
  virtual void info(std::string_view /*line*/) {}
  virtual void warn(std::string_view /*line*/) {}
};

// A reporter that drops everything (tests, library defaults).
Reporter& null_reporter();

}  // namespace graphsub
