#include "onnx/model_io.h"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <filesystem>
#include <fstream>

#include "ir/error.h"

namespace graphsub {

std::string read_binary_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("cannot read '{}': it is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open '{}'", path));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(fmt::format("reading '{}' failed", path));
  return bytes;
}

onnx::ModelProto parse_model(std::string_view bytes, const std::string& label) {
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    throw Error(
        fmt::format("{}: {} bytes is over protobuf's 2 GiB limit; models this large must "
                    "keep their weights as external data",
                    label, bytes.size()));
  if (bytes.empty()) throw Error(fmt::format("{}: the file is empty, not an ONNX model", label));
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  onnx::ModelProto m;
  if (!m.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    throw Error(
        fmt::format("{}: not a valid ONNX model (the protobuf data is truncated or "
                    "corrupt)",
                    label));
  if (!m.has_graph())
    throw Error(fmt::format("{}: not an ONNX model (no graph in the file)", label));
  return m;
}

void write_model(onnx::ModelProto& m, const std::string& path, bool external) {
  namespace fs = std::filesystem;
  if (external) {
    fs::path data_path = fs::path(path).string() + ".data";
    std::string location = data_path.filename().string();
    std::ofstream data(data_path, std::ios::binary | std::ios::trunc);
    if (!data) throw Error(fmt::format("cannot write '{}'", data_path.string()));
    int64_t offset = 0;
    for (auto& t : *m.mutable_graph()->mutable_initializer()) {
      if (!t.has_raw_data() || t.raw_data().size() < 1024) continue;
      int64_t pad = (4096 - offset % 4096) % 4096;  // page-aligned, so readers can map it
      data << std::string(static_cast<size_t>(pad), '\0');
      offset += pad;
      const std::string& raw = t.raw_data();
      data.write(raw.data(), static_cast<std::streamsize>(raw.size()));
      auto add = [&](const char* k, const std::string& v) {
        auto* e = t.add_external_data();
        e->set_key(k);
        e->set_value(v);
      };
      add("location", location);
      add("offset", std::to_string(offset));
      add("length", std::to_string(raw.size()));
      offset += static_cast<int64_t>(raw.size());
      t.clear_raw_data();
      t.set_data_location(onnx::TensorProto::EXTERNAL);
    }
    data.close();
    if (!data) throw Error(fmt::format("writing '{}' failed", data_path.string()));
  }
  if (m.ByteSizeLong() > static_cast<size_t>(INT_MAX))
    throw Error(
        fmt::format("'{}': the model is over protobuf's 2 GiB limit; write its weights as "
                    "external data",
                    path));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(fmt::format("cannot write '{}'", path));
  if (!m.SerializeToOstream(&out)) throw Error(fmt::format("writing '{}' failed", path));
  out.close();
  if (!out) throw Error(fmt::format("writing '{}' failed", path));
}

}  // namespace graphsub
