#include "gen/shard_files.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace graphsub::gen {

namespace fs = std::filesystem;

std::string shard_path(const std::string& dir, const std::string& name, int rank) {
  return (fs::path(dir) / fmt::format("{}-{}", name, rank)).string();
}

void write_file_whole(const std::string& path, const std::string& bytes) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error(fmt::format("cannot write '{}': {}", tmp, std::strerror(errno)));
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) throw Error(fmt::format("error writing '{}' (disk full?)", tmp));
  }
  rename_path(tmp, path);
}

std::optional<std::string> read_file_if_any(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return std::nullopt;
  // Read into a string of the file's size: a stream buffer would hold a second copy of a
  // shard (tens of MiB at N = 4) on the way.
  std::streamoff size = f.tellg();
  if (size < 0) throw Error(fmt::format("error reading '{}'", path));
  std::string bytes(static_cast<size_t>(size), '\0');
  f.seekg(0);
  if (!f.read(bytes.data(), size)) throw Error(fmt::format("error reading '{}'", path));
  return bytes;
}

bool path_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

void make_dirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw Error(fmt::format("cannot make the folder '{}': {}", path, ec.message()));
}

void remove_all(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) throw Error(fmt::format("cannot remove '{}': {}", path, ec.message()));
}

void rename_path(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) throw Error(fmt::format("cannot rename '{}' to '{}': {}", from, to, ec.message()));
}

}  // namespace graphsub::gen
