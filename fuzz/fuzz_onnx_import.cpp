// libFuzzer target for graphsub's ONNX path: import, optimize, check and export
// (fuzz_harness.h). Any byte string must either go through or fail with graphsub::Error;
// crashes, hangs, sanitizer reports and other exception types are bugs. Built by
// fuzz/run_fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_harness.h"

// libFuzzer calls this before it starts its memory-watching thread.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphsub::fuzz::prepare();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  graphsub::fuzz::run_one_input(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
