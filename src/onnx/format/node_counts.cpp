// ONNX node counts of a written model, for reports: the exporter writes some graphsub
// operators as several ONNX nodes (a conv with a fused activation, say), so the counts after
// optimization are read from what was written, not from the graph.
#include <fmt/format.h>

#include "core/error.h"
#include "onnx/format/model_io.h"
#include "onnx/onnx_model.h"

namespace graphsub {

std::map<std::string, int64_t> onnx_node_counts(std::string_view model_bytes,
                                                const std::string& label) {
  return node_counts(parse_model(model_bytes, label));
}

std::map<std::string, int64_t> node_counts(const onnx::ModelProto& m) {
  std::map<std::string, int64_t> counts;
  for (const auto& n : m.graph().node()) {
    bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    ++counts[default_domain ? n.op_type() : n.domain() + ":" + n.op_type()];
  }
  return counts;
}

}  // namespace graphsub
