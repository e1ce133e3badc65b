#include "ort/target.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace graphsub::ort {

const std::vector<std::string>& target_names() {
  static const std::vector<std::string> names = {"ort", "onednn"};
  return names;
}

Target open_target(const std::string& requested, const WorkerOptions& opts) {
  const auto& names = target_names();
  if (!requested.empty() && std::find(names.begin(), names.end(), requested) == names.end())
    throw Error(fmt::format("--target {}: unknown target (targets: {})", requested,
                            fmt::join(names, ", ")));
  Target t;
  if (requested == "onednn") {
    t.name = "onednn";
    return t;
  }
  std::string why;
  t.worker = try_start_worker(&why, opts);
  if (t.worker) {
    t.name = "ort";
    return t;
  }
  if (requested == "ort") throw Error(fmt::format("--target ort: {}", why));
  t.name = "onednn";
  t.fallback = fmt::format(
      "ONNX Runtime is not available ({}); optimizing for graphsub's oneDNN "
      "executor instead",
      why);
  return t;
}

}  // namespace graphsub::ort
