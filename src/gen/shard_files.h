#pragma once
// The run directory of a generation kept on disk (`generate --run-dir`, and every run on
// several ranks): each rank's share of each stage is one file or folder there, written under a
// temporary name and renamed when whole, so that a killed rank leaves no result that looks
// finished and a rerun redoes only the shares that are missing.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"

namespace graphsub::gen {

// `dir`/`name`-`rank`, e.g. run/enum-0.
std::string shard_path(const std::string& dir, const std::string& name, int rank);
// Writes `bytes` to `path` through `path`.tmp and a rename (never a partial file at `path`).
void write_file_whole(const std::string& path, const std::string& bytes);
// The file's bytes, or nothing when there is no file at `path`.
std::optional<std::string> read_file_if_any(const std::string& path);
bool path_exists(const std::string& path);
void make_dirs(const std::string& path);
void remove_all(const std::string& path);
// Renames `from` to `to` (a folder made under a temporary name).
void rename_path(const std::string& from, const std::string& to);

// Plain values and vectors of them as bytes, for the shard files (read back by the same
// program, so no byte order or versioning beyond the file's own check word).
class ByteWriter {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint64_t>(v.size());
    if (!v.empty()) out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    out_ += s;
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

class ByteReader {
 public:
  // `what` names the file in errors.
  ByteReader(std::string_view bytes, std::string what) : in_(bytes), what_(std::move(what)) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  template <class T>
  std::vector<T> get_vector() {
    uint64_t n = get<uint64_t>();
    if (n > (in_.size() - at_) / sizeof(T)) truncated();
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), in_.data() + at_, n * sizeof(T));  // an empty v has no data
    at_ += n * sizeof(T);
    return v;
  }
  std::string get_string() {
    uint64_t n = get<uint64_t>();
    need(n);
    std::string s(in_.substr(at_, n));
    at_ += n;
    return s;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  void need(uint64_t n) {
    if (n > in_.size() - at_) truncated();
  }
  [[noreturn]] void truncated() const {
    throw Error(what_ +
                ": truncated or damaged shard file (remove the run directory to start over)");
  }
  std::string_view in_;
  size_t at_ = 0;
  std::string what_;
};

}  // namespace graphsub::gen
