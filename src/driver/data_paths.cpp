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

std::vector<std::string> shipped_ort_fused_rules() {
  std::vector<std::string> files;
  for (const char* name : {"ort_fused.rules", "ort_attention.rules", "onnx_attention.rules"}) {
    fs::path p = fs::path(data_dir()) / "rules" / name;
    std::error_code ec;
    if (!fs::exists(p, ec))
      throw Error(fmt::format("--ort-contrib-ops: rules/{} is missing from the data folder {}",
                              name, data_dir()));
    files.push_back(p.string());
  }
  return files;
}

namespace {

// A virtual environment's Python when the folder is one (pyvenv.cfg) and holds PyPI's
// onnxruntime; "" otherwise.
std::string venv_python_with_ort(const fs::path& venv) {
  std::error_code ec;
  if (!fs::is_regular_file(venv / "pyvenv.cfg", ec) || !fs::exists(venv / "bin" / "python", ec))
    return "";
  for (const auto& lib : fs::directory_iterator(venv / "lib", ec))
    if (fs::is_directory(lib.path() / "site-packages" / "onnxruntime", ec))
      return (venv / "bin" / "python").string();
  return "";
}

// The Python whose onnxruntime the worker runs: the virtual environment holding this binary
// (the graphsub package installed with pip), else the project's .venv in the data folder (a
// build inside the source tree, as scripts/setup.sh makes it); "" when neither has one.
std::string deployed_python() {
  for (fs::path dir = own_binary().parent_path(); !dir.empty(); dir = dir.parent_path()) {
    std::string p = venv_python_with_ort(dir);
    if (!p.empty()) return p;
    if (dir == dir.root_path()) break;
  }
  return venv_python_with_ort(fs::path(data_dir()) / ".venv");
}

}  // namespace

OrtWorkerCommand ort_worker_command() {
  const char* choice = std::getenv("GRAPHSUB_ORT_WORKER");
  std::string which = choice ? choice : "";
  if (!which.empty() && which != "node" && which != "python")
    throw Error(fmt::format("GRAPHSUB_ORT_WORKER={}: not a worker (node or python)", which));
  fs::path tools = fs::path(data_dir()) / "tools";
  OrtWorkerCommand node{"node", (tools / "ort_worker.js").string()};
  if (which == "node") return node;
  std::string python;
  if (const char* env = std::getenv("GRAPHSUB_PYTHON"); env != nullptr && *env != '\0')
    python = env;
  if (python.empty()) python = deployed_python();
  if (python.empty()) {
    if (which.empty()) return node;  // no Python with onnxruntime here: npm's release
    python = "python3";
  }
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
