#pragma once
// The largest graphs are streamed to part files (hundreds of GB at N = 5 over TASO's set in
// one process). A run that will fill its disk should say so early, not fail with a write
// error hours later: once a fiftieth of the root tasks is done, the bytes spilled so far are
// projected over every task and compared with the free space of the folder they go to.
// Root tasks differ in size, so this is a forecast, given as a warning, not a refusal.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace graphsub {
class Reporter;
}

namespace graphsub::gen {

class SpillForecast {
 public:
  // `dir`: where the parts are written ("" for the system's temporary files); `writers`:
  // the processes writing shares of about this size there (the ranks, into a shared run
  // folder). `free_bytes` answers the free space of a folder (tests give their own; nullopt:
  // unknown).
  using FreeBytes = std::function<std::optional<uint64_t>(const std::string& dir)>;
  SpillForecast(std::string dir, uint64_t writers, FreeBytes free_bytes = filesystem_free_bytes);

  // After `done` of `total` root tasks with `spilled` bytes written: warns once, through
  // `rep`, when the projection exceeds the free space.
  void check(size_t done, size_t total, uint64_t spilled, Reporter& rep);

  static std::optional<uint64_t> filesystem_free_bytes(const std::string& dir);

 private:
  std::string dir_;
  uint64_t writers_;
  FreeBytes free_bytes_;
  bool checked_ = false;
};

}  // namespace graphsub::gen
