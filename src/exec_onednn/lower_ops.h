#pragma once
// How each operator is lowered to oneDNN. A lowering creates its primitives through the
// Lowering context and returns a short description of what it built ("convolution",
// "view", ...). It throws dnnl::error (or graphsub::Error) when oneDNN cannot take the node;
// the executor then falls back to the operator's reference kernel for that node.
#include <string>
#include <string_view>

#include "exec_onednn/lowering.h"

namespace graphsub::onednn {

using LowerFn = std::string (*)(Lowering&);

// nullptr: no oneDNN lowering (the reference kernel runs inside the executor).
LowerFn find_lowering(std::string_view op);

// The operator's reference float kernel on plain buffers; works for every operator with
// semantics.
std::string lower_reference(Lowering& L);

// Thrown by a lowering to say "this configuration is not for oneDNN" (not an error).
struct NotLowered {
  std::string why;
};

// Families (one file each).
std::string lower_unary(Lowering& L);
std::string lower_binary_same(Lowering& L);
std::string lower_binary_broadcast(Lowering& L);
std::string lower_smul(Lowering& L);
std::string lower_identity(Lowering& L);
std::string lower_conv(Lowering& L);
std::string lower_conv_add(Lowering& L);
std::string lower_matmul(Lowering& L);
std::string lower_transpose(Lowering& L);
std::string lower_pool(Lowering& L);
std::string lower_global_avgpool(Lowering& L);
std::string lower_concat(Lowering& L);
std::string lower_split(Lowering& L);
std::string lower_reshape(Lowering& L);
std::string lower_batchnorm(Lowering& L);
std::string lower_softmax(Lowering& L);
std::string lower_layernorm(Lowering& L);
std::string lower_reduce(Lowering& L);
std::string lower_param_unary(Lowering& L);
std::string lower_prelu(Lowering& L);

}  // namespace graphsub::onednn
