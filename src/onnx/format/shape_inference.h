#pragma once
// ONNX's shape inference, run in graphsub's isolated child (isolated_call.h): the models come
// from untrusted files, and inference has crashed on malformed nodes.
#include <onnx/onnx_pb.h>

#include <string>

namespace graphsub {

// Forks the child that runs inference now, while the process is small (before a model is
// read): later, the fork would share the model's pages with it.
void start_shape_inference();

// ONNX shape inference of `m` (types not checked, errors ignored, data propagation on): the
// inferred graph's inputs, value_info and outputs (no nodes, no initializers). Throws Error
// naming `what` when inference crashes, throws or runs past `timeout_s` seconds.
onnx::GraphProto infer_shapes_isolated(const onnx::ModelProto& m, const std::string& what,
                                       unsigned timeout_s);

}  // namespace graphsub
