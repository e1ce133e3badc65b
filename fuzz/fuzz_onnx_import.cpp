// libFuzzer target for the ONNX importer (and the exporter behind it): any byte string must
// either import or fail with graphsub::Error; crashes, hangs, sanitizer reports and other
// exception types are bugs. Built by fuzz/run_fuzz.sh (clang, -fsanitize=fuzzer,address).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/error.h"
#include "onnx/onnx_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    graphsub::ImportedModel m = graphsub::import_onnx_bytes(bytes, "");
    // What imports must also export (onnx::checker included) or fail cleanly.
    graphsub::export_onnx_bytes(m.graph, m.info.get());
  } catch (const graphsub::Error&) {
  }
  return 0;
}
