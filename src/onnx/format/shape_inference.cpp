#include "onnx/format/shape_inference.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "core/error.h"
#include "onnx/format/isolated_call.h"

namespace graphsub {

namespace {

std::string infer(const std::string& request) {
  onnx::ModelProto m;
  if (!m.ParseFromString(request)) throw Error("the request is not a model");
  onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0,
                                      /*data_prop=*/true);
  onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), options);
  onnx::GraphProto types;  // only what the caller reads back
  *types.mutable_input() = m.graph().input();
  *types.mutable_value_info() = m.graph().value_info();
  *types.mutable_output() = m.graph().output();
  return types.SerializeAsString();
}

IsolatedServer& server() {
  // The schema registry is built before the fork, so the child does not rebuild it.
  static IsolatedServer* s = [] {
    onnx::OpSchemaRegistry::Instance();
    return new IsolatedServer(infer);  // never destroyed: used until the process exits
  }();
  return *s;
}

}  // namespace

void start_shape_inference() {
  server().start();
}

onnx::GraphProto infer_shapes_isolated(const onnx::ModelProto& m, const std::string& what,
                                       unsigned timeout_s) {
  std::string typed = server().call(m.SerializeAsString(), what, timeout_s);
  onnx::GraphProto g;
  if (!g.ParseFromString(typed)) throw Error(fmt::format("{} returned unreadable results", what));
  return g;
}

}  // namespace graphsub
