#include "driver/latency_guard_step.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"

namespace graphsub::driver {
namespace {

// A private folder for the files ONNX Runtime loads, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "graphsub-guard-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw Error(fmt::format("cannot create a folder like {}", tmpl));
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace

GuardStep run_latency_guard(ort::Worker& worker, const ImportedModel& m, const Graph& optimized,
                            const std::string& original_path, const std::string* model_bytes,
                            const ExportOptions& eo, int runs, Reporter& rep) {
  GuardStep step;
  ScratchDir dir;
  std::string original = original_path;
  if (original.empty()) {
    original = dir.file("original.onnx");
    std::ofstream out(original, std::ios::binary);
    out << *model_bytes;
    if (!out.flush()) throw Error(fmt::format("cannot write {}", original));
  }
  // The original must run in ONNX Runtime for a comparison to mean anything (a model with
  // operators of another runtime's domain may not); then the guard is skipped, and says so.
  try {
    worker.call({{"op", "load"}, {"id", "probe"}, {"path", original}, {"threads", 1}});
    worker.call({{"op", "unload"}, {"id", "probe"}});
  } catch (const Error& e) {
    step.note =
        fmt::format("latency guard skipped: ONNX Runtime cannot run the original ({})", e.what());
    rep.warn(step.note);
    return step;
  }
  std::string candidate = dir.file("optimized.onnx");
  ExportOptions ceo = eo;
  ceo.opset = eo.opset;
  export_onnx_file(optimized, m.info.get(), candidate, ceo);
  rep.progress("guard", 0, 0, "timing the original and the optimized model in ONNX Runtime");
  ort::GuardOptions g;
  g.runs = runs;
  try {
    step.result = ort::guard_latency(worker, original, {candidate}, g);
  } catch (const Error& e) {
    throw Error(fmt::format(
        "the optimized model does not run in ONNX Runtime ({}); nothing was written", e.what()));
  }
  step.write_original = step.result->chosen < 0;
  return step;
}

}  // namespace graphsub::driver
