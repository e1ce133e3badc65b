// Which operators have a oneDNN lowering. Everything else with semantics (pad, slice,
// enlarge, erf, the generator's constants, ...) runs its reference kernel in the executor.
#include <map>

#include "exec_onednn/lower_ops.h"

namespace graphsub::onednn {

LowerFn find_lowering(std::string_view op) {
  static const std::map<std::string, LowerFn, std::less<>> table = {
      {"relu", lower_unary},
      {"sigmoid", lower_unary},
      {"tanh", lower_unary},
      {"gelu", lower_unary},
      {"exp", lower_unary},
      {"sqrt", lower_unary},
      {"relu6", lower_unary},
      {"hardswish", lower_unary},
      {"silu", lower_unary},
      {"clip", lower_param_unary},
      {"leaky_relu", lower_param_unary},
      {"pow", lower_param_unary},
      {"prelu", lower_prelu},
      {"identity", lower_identity},
      {"ewadd", lower_binary_same},
      {"ewmul", lower_binary_same},
      {"add", lower_binary_broadcast},
      {"sub", lower_binary_broadcast},
      {"mul", lower_binary_broadcast},
      {"div", lower_binary_broadcast},
      {"smul", lower_smul},
      {"conv", lower_conv},
      {"conv_add", lower_conv_add},
      {"matmul", lower_matmul},
      {"transpose", lower_transpose},
      {"poolavg", lower_pool},
      {"poolmax", lower_pool},
      {"global_avgpool", lower_global_avgpool},
      {"concat", lower_concat},
      {"split", lower_split},
      {"reshape", lower_reshape},
      {"flatten", lower_reshape},
      {"batchnorm", lower_batchnorm},
      {"softmax", lower_softmax},
      {"layernorm", lower_layernorm},
      {"reduce_mean", lower_reduce},
      {"reduce_sum", lower_reduce},
  };
  auto it = table.find(op);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace graphsub::onednn
