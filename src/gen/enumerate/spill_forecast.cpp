#include "gen/enumerate/spill_forecast.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>

#include "ir/report.h"

namespace graphsub::gen {

SpillForecast::SpillForecast(std::string dir, uint64_t writers, FreeBytes free_bytes)
    : dir_(dir.empty() ? std::string(P_tmpdir) : std::move(dir)),
      writers_(std::max<uint64_t>(1, writers)),
      free_bytes_(std::move(free_bytes)) {}

std::optional<uint64_t> SpillForecast::filesystem_free_bytes(const std::string& dir) {
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) != 0) return std::nullopt;
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

void SpillForecast::check(size_t done, size_t total, uint64_t spilled, Reporter& rep) {
  // One look, at the first report past a fiftieth of the tasks (small runs never get there
  // with anything to say: their first task is a large share of them).
  if (checked_ || total < 50 || done * 50 < total) return;
  checked_ = true;
  std::optional<uint64_t> free = free_bytes_(dir_);
  if (!free) return;
  double projected = static_cast<double>(spilled) * static_cast<double>(total) /
                     static_cast<double>(done) * static_cast<double>(writers_);
  if (projected <= static_cast<double>(*free)) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  rep.warn(fmt::format(
      "enumeration: {:.1f} GiB of graphs spilled after {} of {} root tasks; at this rate the "
      "largest graphs need about {:.0f} GiB{}, and {} has {:.1f} GiB free: the run will likely "
      "fail when the disk is full (run on more ranks with --run-dir on a larger disk, or "
      "measure a fraction with --shards K/R)",
      static_cast<double>(spilled) / kGiB, done, total, projected / kGiB,
      writers_ > 1 ? fmt::format(" on its {} ranks", writers_) : std::string(), dir_,
      static_cast<double>(*free) / kGiB));
}

}  // namespace graphsub::gen
