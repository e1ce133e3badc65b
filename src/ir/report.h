#pragma once
// The only way stages below the command line talk to the user: a Reporter. The command line
// supplies one that draws a progress line on a terminal (quiet otherwise, or with --quiet).
#include <exception>
#include <string_view>

namespace graphsub {

// Thrown by a Reporter's progress() to stop the work it reports on (the Python module does so
// on Ctrl-C or when its progress callback raises). Not an Error: code that reads an Error as
// "this rewrite does not apply" must let it through. Long loops call progress() at least
// about once a second, from any thread; the loops on worker threads stop all their workers
// and rethrow it on the calling thread.
class Cancelled : public std::exception {
 public:
  const char* what() const noexcept override { return "cancelled"; }
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  // done/total of a long stage; total 0 when unknown. May throw Cancelled.
  virtual void progress(std::string_view /*stage*/, double /*done*/, double /*total*/,
                        std::string_view /*detail*/ = {}) {}
  virtual void info(std::string_view /*line*/) {}
  virtual void warn(std::string_view /*line*/) {}
};

// A reporter that drops everything (tests, library defaults).
Reporter& null_reporter();

}  // namespace graphsub
