#include "support/folder_layering.h"

#include <filesystem>
#include <fstream>
#include <regex>

namespace graphsub::testing {

namespace fs = std::filesystem;

FolderLayering check_folder_layering(const std::string& source_dir, const std::string& stage,
                                     const std::map<std::string, std::set<std::string>>& allowed,
                                     const std::set<std::string>& top_files) {
  FolderLayering r;
  const fs::path root = fs::path(source_dir) / "src" / stage;
  const std::regex include("#include \"" + stage + "/([a-z_]+)/");
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() ? !top_files.count(name) : !allowed.count(name))
      r.stray.push_back(entry.path().string());
    if (!entry.is_directory() || !allowed.count(name)) continue;
    for (const auto& file : fs::directory_iterator(entry.path())) {
      std::ifstream in(file.path());
      std::string line;
      while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_search(line, m, include) && !allowed.at(name).count(m[1].str()))
          r.violations.push_back(file.path().string() + " (" + name + ") includes " + line);
      }
      ++r.files;
    }
  }
  return r;
}

}  // namespace graphsub::testing
