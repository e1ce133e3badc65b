#pragma once
// Reading and writing ONNX model files (internal to src/onnx).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace graphsub {

// The whole file, which must be a regular file (a FIFO, device or directory is refused without
// reading it) of at most `max_bytes` bytes (checked before reading; by default protobuf's
// limit, 2 GiB - 1). Throws Error naming the
// file and the reason.
std::string read_binary_file(const std::string& path, int64_t max_bytes = 2147483647);

// Bytes [offset, offset + length) of the regular file `path`; length -1 reads to the end.
// The range is checked against the file's size before anything is read. Throws Error
// starting with `what`.
std::string read_file_range(const std::string& path, int64_t offset, int64_t length,
                            const std::string& what);

// Parses a serialized model; throws Error naming `label` when the bytes are not a model.
onnx::ModelProto parse_model(std::string_view bytes, const std::string& label);

// Nodes of a model by op_type (onnx_node_counts of onnx_model.h, on a parsed model).
std::map<std::string, int64_t> node_counts(const onnx::ModelProto& m);

// Writes the model to `path`. With `external`, initializer data of 1 KiB or more goes to
// `<path>.data` (aligned offsets), referenced by relative location. Each file is written to
// a temporary file in the target folder, flushed to disk and renamed into place only when
// complete, so a failed write (disk full, file-size limit) leaves any old file as it was and
// no partial file behind. `protected_files` (the source model and its data files) are never
// replaced. Throws Error naming the file and the reason.
void write_model(onnx::ModelProto& m, const std::string& path, bool external,
                 const std::vector<std::string>& protected_files);

}  // namespace graphsub
