#pragma once
// Reading and writing ONNX model files (internal to src/onnx).
#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>

namespace graphsub {

// The whole file; throws Error naming it when it cannot be read.
std::string read_binary_file(const std::string& path);
// Parses a serialized model; throws Error naming `label` when the bytes are not a model.
onnx::ModelProto parse_model(std::string_view bytes, const std::string& label);
// Writes the model to `path`. With `external`, initializer data of 1 KiB or more goes to
// `<path>.data` (aligned offsets), referenced by relative location. Throws Error on I/O errors.
void write_model(onnx::ModelProto& m, const std::string& path, bool external);

}  // namespace graphsub
