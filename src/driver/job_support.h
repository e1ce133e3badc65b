#pragma once
// What the optimize jobs (optimize_job.cpp, onnx_job.cpp) share: their clock, and the
// search options as the report writes them.
#include <chrono>
#include <map>
#include <string>

#include "driver/optimize_options.h"

namespace graphsub::driver {

using JobClock = std::chrono::steady_clock;

inline double seconds_since(JobClock::time_point t) {
  return std::chrono::duration<double>(JobClock::now() - t).count();
}

// The search options as text, for Report::options.
std::map<std::string, std::string> search_options_text(const SearchJobOptions& s);

}  // namespace graphsub::driver
