#include "ir/process_stats.h"

#include <sys/resource.h>

#include <ctime>
#include <fstream>
#include <string>

namespace graphsub {

uint64_t process_peak_rss_bytes() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

double process_peak_rss_mib() {
  return static_cast<double>(process_peak_rss_bytes()) / (1 << 20);
}

uint64_t process_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string field;
  while (status >> field) {
    if (field != "VmRSS:") continue;
    uint64_t kib = 0;
    status >> kib;
    return kib * 1024;
  }
  return 0;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace graphsub
