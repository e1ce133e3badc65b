#include "driver/data_paths.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.h"

namespace graphsub::driver {

namespace fs = std::filesystem;

namespace {

bool holds_axioms(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / kAxiomsFile, ec);
}

// The file this code was loaded from: the executable, or the shared object it is linked into.
fs::path own_binary() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_binary), &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    fs::path p = fs::canonical(info.dli_fname, ec);
    if (!ec) return p;
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

std::string find_data_dir() {
  if (const char* env = std::getenv("GRAPHSUB_DATA_DIR"); env != nullptr && *env != '\0') {
    if (!holds_axioms(env))
      throw Error(fmt::format("GRAPHSUB_DATA_DIR={}: no {} there", env, kAxiomsFile));
    return env;
  }
  fs::path binary = own_binary();
  // build/python/graphsub/_graphsub.so is the deepest of the build's binaries: 3 levels.
  fs::path dir = binary.parent_path();
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    if (holds_axioms(dir)) return dir.string();
    if (dir == dir.root_path()) break;
  }
  if (holds_axioms(fs::current_path())) return fs::current_path().string();
  throw Error(fmt::format(
      "cannot find graphsub's data ({}): not above {} nor in the working directory; set "
      "GRAPHSUB_DATA_DIR to the source tree",
      kAxiomsFile, binary.empty() ? std::string("the binary") : binary.string()));
}

}  // namespace

std::string data_dir() {
  // Resolved once: the binary and the environment do not change while the process runs.
  static const std::string dir = find_data_dir();
  return dir;
}

std::string shipped_axioms() {
  return (fs::path(data_dir()) / kAxiomsFile).string();
}

std::vector<std::string> shipped_rule_files() {
  std::vector<std::string> files;
  for (const char* rel : {"rules/default.rules", "rules/merges.rules", "rules/activations.rules",
                          "rules/indexing.rules"}) {
    fs::path p = fs::path(data_dir()) / rel;
    std::error_code ec;
    if (fs::exists(p, ec)) files.push_back(p.string());
  }
  return files;
}

namespace {

// The Python of the virtual environment holding this binary (the folder with pyvenv.cfg above
// it: the graphsub package installed with pip), or "" outside one.
std::string own_venv_python() {
  std::error_code ec;
  for (fs::path dir = own_binary().parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / "pyvenv.cfg", ec) && fs::exists(dir / "bin" / "python", ec))
      return (dir / "bin" / "python").string();
    if (dir == dir.root_path()) break;
  }
  return "";
}

}  // namespace

OrtWorkerCommand ort_worker_command() {
  const char* choice = std::getenv("GRAPHSUB_ORT_WORKER");
  std::string which = choice ? choice : "";
  fs::path tools = fs::path(data_dir()) / "tools";
  if (which.empty() || which == "node") return {"node", (tools / "ort_worker.js").string()};
  if (which != "python")
    throw Error(fmt::format("GRAPHSUB_ORT_WORKER={}: not a worker (node or python)", which));
  std::string python;
  if (const char* env = std::getenv("GRAPHSUB_PYTHON"); env != nullptr && *env != '\0')
    python = env;
  if (python.empty()) python = own_venv_python();
  if (python.empty()) python = "python3";
  return {python, (tools / "ort_worker.py").string()};
}

opt::RuleLibraryOptions resolved(opt::RuleLibraryOptions o) {
  if (o.rule_files.empty()) o.rule_files = shipped_rule_files();
  // Explicit rule files need no data folder: without one they are read without the axioms'
  // domains (parameter values then go unchecked), as a rule file alone always was.
  if (o.axioms_file.empty()) {
    try {
      o.axioms_file = shipped_axioms();
    } catch (const Error&) {
    }
  }
  return o;
}

}  // namespace graphsub::driver
