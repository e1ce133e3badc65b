#include "driver/evaluate_job.h"

#include <fmt/format.h>

#include "core/error.h"
#include "exec/reference_executor.h"
#include "onnx/onnx_model.h"

namespace graphsub::driver {

std::vector<std::pair<std::string, HostTensor<float>>> run_evaluate_job(
    std::string_view model_bytes, const TensorMap<float>& feeds, Reporter& rep) {
  ImportOptions io;
  for (const auto& [name, t] : feeds) io.input_shapes[name] = t.shape;
  io.keep_symbolic = false;
  ImportedModel m = import_onnx_bytes(model_bytes, "", io, rep, "<evaluate>");
  for (NodeId id = 0; id < m.graph.num_slots(); ++id)
    if (m.graph.alive(id) && m.graph.node(id).op->cls == OpClass::Opaque)
      throw Error(fmt::format("evaluate: {} has no reference semantics in graphsub (kept opaque)",
                              m.graph.describe(id)));
  std::vector<HostTensor<float>> values = run_reference<float>(m.graph, feeds);
  std::vector<std::pair<std::string, HostTensor<float>>> out;
  for (size_t i = 0; i < values.size(); ++i)
    out.emplace_back(m.graph.outputs()[i].name, std::move(values[i]));
  return out;
}

}  // namespace graphsub::driver
