#include "onnx/format/model_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "core/error.h"

namespace graphsub {
namespace {

namespace fs = std::filesystem;

std::string errno_text(int err) {
  return std::system_category().message(err);
}

const char* file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// A file descriptor closed on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// Opens `path` for reading if it is a regular file, with its size. stat() before open() so
// that a device is never opened; O_NONBLOCK and fstat() after open() so that a FIFO swapped
// in between can neither block the open nor be read.
Fd open_regular(const std::string& path, const std::string& what, int64_t& size) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(fmt::format("{}cannot open '{}': {}", what, path, errno_text(errno)));
  if (!S_ISREG(st.st_mode))
    throw Error(fmt::format("{}cannot read '{}': it is {}, not a regular file", what, path,
                            file_kind(st.st_mode)));
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0)
    throw Error(fmt::format("{}cannot open '{}': {}", what, path, errno_text(errno)));
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(fmt::format("{}cannot read '{}': it is not a regular file", what, path));
  size = static_cast<int64_t>(st.st_size);
  return fd;
}

// Reads exactly `length` bytes at `offset`; throws when the file ends first.
std::string read_exact(int fd, int64_t offset, int64_t length, const std::string& path,
                       const std::string& what) {
  std::string buf(static_cast<size_t>(length), '\0');
  int64_t done = 0;
  while (done < length) {
    ssize_t r = ::pread(fd, buf.data() + done, static_cast<size_t>(length - done),
                        static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw Error(fmt::format("{}reading '{}' failed: {}", what, path, errno_text(errno)));
    if (r == 0) throw Error(fmt::format("{}'{}' became shorter while it was read", what, path));
    done += r;
  }
  return buf;
}

// The default action of SIGXFSZ kills the process when a write passes the file-size limit
// (RLIMIT_FSIZE); ignored, the write fails with EFBIG and the writer reports it and cleans
// up. A handler the program installed itself is left alone.
void ignore_file_size_signal() {
  struct sigaction old {};
  if (::sigaction(SIGXFSZ, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    ::sigaction(SIGXFSZ, &ign, nullptr);
  }
}

// A new file beside `target`, renamed onto it by commit() and removed otherwise.
class TempFile {
 public:
  explicit TempFile(fs::path target) : target_(std::move(target)) {
    static std::atomic<uint64_t> counter{0};
    for (int attempt = 0;; ++attempt) {
      tmp_ = target_;
      tmp_ += fmt::format(".tmp-{}-{}", ::getpid(), counter++);
      // Mode 0666 less the umask, as for any new file; O_EXCL never reuses a name.
      fd_ = Fd(::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
      if (fd_.get() >= 0) break;
      if (errno != EEXIST || attempt > 100)
        throw Error(
            fmt::format("cannot write '{}': creating a temporary file in its folder "
                        "failed: {}",
                        target_.string(), errno_text(errno)));
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!committed_) {
      fd_.reset();
      std::error_code ec;
      fs::remove(tmp_, ec);
    }
  }

  int fd() const { return fd_.get(); }

  void write(const char* p, size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd_.get(), p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) fail(errno);
      p += w;
      n -= static_cast<size_t>(w);
    }
  }

  [[noreturn]] void fail(int err) const {
    throw Error(fmt::format("writing '{}' failed: {}", target_.string(), errno_text(err)));
  }

  // Flushes the data to disk (so a crash after the rename cannot leave an empty file in
  // place of the old one), closes, and renames onto the target.
  void commit() {
    if (::fsync(fd_.get()) != 0) fail(errno);
    if (::close(fd_.release()) != 0) fail(errno);
    if (::rename(tmp_.c_str(), target_.c_str()) != 0) fail(errno);
    committed_ = true;
  }

 private:
  fs::path target_, tmp_;
  Fd fd_;
  bool committed_ = false;
};

void refuse_protected(const fs::path& out, const std::vector<std::string>& protected_files) {
  for (const auto& p : protected_files) {
    std::error_code ec;
    if (fs::equivalent(out, p, ec))
      throw Error(
          fmt::format("refusing to write '{}': it is the same file as '{}', which the "
                      "model was read from",
                      out.string(), p));
  }
}

void sync_folder(const fs::path& file) {
  fs::path dir = file.parent_path();
  Fd fd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() >= 0) ::fsync(fd.get());  // best effort: the files themselves are complete
}

}  // namespace

std::string read_binary_file(const std::string& path, int64_t max_bytes) {
  int64_t size = 0;
  Fd fd = open_regular(path, "", size);
  if (size > max_bytes)
    throw Error(fmt::format("'{}' is {} bytes, over the limit of {} bytes{}", path, size, max_bytes,
                            max_bytes >= INT_MAX
                                ? " (protobuf's 2 GiB limit; models this large must keep "
                                  "their weights as external data)"
                                : ""));
  return read_exact(fd.get(), 0, size, path, "");
}

std::string read_file_range(const std::string& path, int64_t offset, int64_t length,
                            const std::string& what) {
  int64_t size = 0;
  std::string prefix = what + ": ";
  Fd fd = open_regular(path, prefix, size);
  if (length < 0 && offset >= 0 && offset <= size) length = size - offset;
  // Written as subtractions: offset + length could overflow.
  if (offset < 0 || length < 0 || offset > size || length > size - offset)
    throw Error(fmt::format("{}external data range offset {} length {} is outside '{}' ({} bytes)",
                            prefix, offset, length, path, size));
  return read_exact(fd.get(), offset, length, path, prefix);
}

onnx::ModelProto parse_model(std::string_view bytes, const std::string& label) {
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    throw Error(
        fmt::format("{}: {} bytes is over protobuf's 2 GiB limit; models this large must "
                    "keep their weights as external data",
                    label, bytes.size()));
  if (bytes.empty()) throw Error(fmt::format("{}: the file is empty, not an ONNX model", label));
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  onnx::ModelProto m;
  if (!m.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    throw Error(
        fmt::format("{}: not a valid ONNX model (the protobuf data is truncated or "
                    "corrupt)",
                    label));
  if (!m.has_graph())
    throw Error(fmt::format("{}: not an ONNX model (no graph in the file)", label));
  return m;
}

void write_model(onnx::ModelProto& m, const std::string& path, bool external,
                 const std::vector<std::string>& protected_files) {
  fs::path model_path(path);
  fs::path data_path = model_path.string() + ".data";
  refuse_protected(model_path, protected_files);
  if (external) refuse_protected(data_path, protected_files);
  ignore_file_size_signal();
  std::optional<TempFile> data;
  if (external) {
    data.emplace(data_path);
    std::string location = data_path.filename().string();
    int64_t offset = 0;
    for (auto& t : *m.mutable_graph()->mutable_initializer()) {
      if (!t.has_raw_data() || t.raw_data().size() < 1024) continue;
      int64_t pad = (4096 - offset % 4096) % 4096;  // page-aligned, so readers can map it
      std::string zeros(static_cast<size_t>(pad), '\0');
      data->write(zeros.data(), zeros.size());
      offset += pad;
      const std::string& raw = t.raw_data();
      data->write(raw.data(), raw.size());
      auto add = [&](const char* k, const std::string& v) {
        auto* e = t.add_external_data();
        e->set_key(k);
        e->set_value(v);
      };
      add("location", location);
      add("offset", std::to_string(offset));
      add("length", std::to_string(raw.size()));
      offset += static_cast<int64_t>(raw.size());
      t.clear_raw_data();
      t.set_data_location(onnx::TensorProto::EXTERNAL);
    }
  }
  if (m.ByteSizeLong() > static_cast<size_t>(INT_MAX))
    throw Error(
        fmt::format("'{}': the model is over protobuf's 2 GiB limit; write its weights as "
                    "external data",
                    path));
  TempFile out(model_path);
  {
    google::protobuf::io::FileOutputStream stream(out.fd());
    if (!m.SerializeToZeroCopyStream(&stream) || !stream.Flush())
      out.fail(stream.GetErrno() ? stream.GetErrno() : EIO);
    stream.SetCloseOnDelete(false);
  }
  // Both complete: the data first, so the new model never points into an old data file.
  if (data) data->commit();
  out.commit();
  sync_folder(model_path);
}

}  // namespace graphsub
