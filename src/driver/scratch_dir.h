#pragma once
// A private temporary folder for the files ONNX Runtime loads (the latency guard's candidates,
// the fused-operator check), removed with everything in it.
#include <fmt/format.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"

namespace graphsub::driver {

class ScratchDir {
 public:
  explicit ScratchDir(const char* prefix = "graphsub-guard") {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / fmt::format("{}-XXXXXX", prefix)).string();
    if (!mkdtemp(tmpl.data())) throw Error(fmt::format("cannot create a folder like {}", tmpl));
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Writes `bytes` to the file `name` in the folder; returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    std::string path = file(name);
    std::ofstream out(path, std::ios::binary);
    out << bytes;
    if (!out.flush()) throw Error(fmt::format("cannot write {}", path));
    return path;
  }

 private:
  std::string path_;
};

}  // namespace graphsub::driver
