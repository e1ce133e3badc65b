#pragma once
// A model run with graphsub's own reference kernels on given inputs (`graphsub.evaluate`):
// the semantics every rule is proved under, so that a user or a test can compare them with a
// runtime's on the same values (tests/python compares the fused operators with ONNX Runtime).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "exec/host_tensor.h"
#include "ir/report.h"

namespace graphsub::driver {

// `feeds`: a float tensor for every graph input, by name; a symbolic input dimension takes
// the fed size. Returns the graph outputs, by name, in the model's order. Throws Error naming
// the model for an unreadable model, a missing or misshapen feed, or an operator graphsub
// keeps opaque (it has no reference semantics).
std::vector<std::pair<std::string, HostTensor<float>>> run_evaluate_job(
    std::string_view model_bytes, const TensorMap<float>& feeds, Reporter& rep);

}  // namespace graphsub::driver
