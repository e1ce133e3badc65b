// Fallback for operators oneDNN does not cover: the operator's own reference float kernel,
// run on plain buffers that stay allocated between runs.
#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "exec_onednn/lower_ops.h"

namespace graphsub::onednn {

namespace {

// Everything the kernel call needs, kept alive by the step that runs it.
struct ReferenceCall {
  const OpDef* op = nullptr;
  Attrs attrs;
  std::vector<TensorType> in_types, out_types;
  std::vector<const float*> in;
  std::vector<float*> out;

  void operator()() const {
    // The reference executor hands kernels zeroed outputs; some kernels rely on it.
    for (size_t i = 0; i < out.size(); ++i) std::fill(out[i], out[i] + out_types[i].numel(), 0.f);
    KernelIO<float> io{attrs, in_types, out_types, in, out};
    op->kernel_f32(io);
  }
};

}  // namespace

std::string lower_reference(Lowering& L) {
  const Node& n = L.node();
  if (!n.op->kernel_f32)
    throw Error(fmt::format("{}: no reference kernel (operator without semantics)",
                            L.graph().describe(L.id())));
  auto call = std::make_shared<ReferenceCall>();
  call->op = n.op;
  call->attrs = n.attrs;
  for (size_t i = 0; i < L.num_inputs(); ++i) {
    call->in_types.push_back(L.in_type(i));
    call->in.push_back(static_cast<const float*>(L.in_plain(i).get_data_handle()));
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    call->out_types.push_back(n.outputs[i]);
    call->out.push_back(static_cast<float*>(L.out_plain(i).get_data_handle()));
  }
  L.host([call] { (*call)(); });
  return "reference kernel";
}

}  // namespace graphsub::onednn
