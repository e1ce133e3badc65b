#pragma once
// The generator's stage counts: each goes into GeneratorResult::stages (the library header
// lists them) and, as a line with its time, to the user.
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "gen/generator.h"
#include "ir/report.h"

namespace graphsub::gen {

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

class StageLog {
 public:
  StageLog(GeneratorResult& res, Reporter& rep) : res_(res), rep_(rep) {}
  // A stage that ran since `t0` and left `count` items.
  void timed(const std::string& name, uint64_t count, Clock::time_point t0) {
    timed(name, count, since(t0));
  }
  void timed(const std::string& name, uint64_t count, double seconds) {
    res_.stages.push_back({name, count, seconds});
    rep_.info(fmt::format("{:<32} {:>12}   {:8.2f} s", name, count, res_.stages.back().seconds));
  }
  // A count within a stage (no time of its own); `detail` follows it on the user's line.
  void count(const std::string& name, uint64_t count, const std::string& detail = "") {
    res_.stages.push_back({name, count, 0});
    rep_.info(fmt::format("{:<32} {:>12}", name, count) + detail);
  }

 private:
  GeneratorResult& res_;
  Reporter& rep_;
};

}  // namespace graphsub::gen
