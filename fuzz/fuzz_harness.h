#pragma once
// One fuzz input through graphsub's whole ONNX path: import, optimize (a small search with
// the shipped rules and the analytic cost), a numeric check of small results on the
// reference executor, and export (to memory, and to files when the input carries external
// data). Shared by the libFuzzer target (fuzz_onnx_import.cpp) and the corpus replay test
// (tests/test_onnx_fuzz_corpus.cpp).
//
// An input is either a serialized ONNX model, or "GSXD", the model's length as 4 bytes
// little-endian, the model, then the bytes of an external-data file. That file is written
// to `w.bin` in a scratch folder which also holds the hostile neighbours a location may
// name: `link.bin` (a symbolic link to a file outside the folder), `inlink.bin` (a link to
// w.bin, which is allowed), `fifo.bin` (a FIFO), `sub` (a folder).
#include <string>
#include <string_view>

namespace graphsub::fuzz {

inline constexpr std::string_view kExternalMagic = "GSXD";

// The scratch folder for this process (created with its fixtures on first use).
const std::string& scratch_folder();

// Before the first input, while the process has one thread: starts the helper process that
// ONNX's shape inference children are forked from.
void prepare();

// Handles one input. Returns normally when graphsub accepted it or rejected it with
// graphsub::Error; any other exception escapes (a bug, as is a crash or a sanitizer report).
// Returns true when the model imported.
bool run_one_input(std::string_view bytes);

// Packs a model and its external data into the input format above.
std::string pack_external(std::string_view model, std::string_view data);

}  // namespace graphsub::fuzz
