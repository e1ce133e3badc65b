#pragma once
// Which versions of each default-domain ONNX operator graphsub reads with their meaning.
// An operator's version at a model's opset is the `since_version` of its schema there (Clip
// at opset 10 is Clip-6, with its bounds as attributes; at opset 11 it is Clip-11, with them as
// inputs). The converters and the import-time evaluator are written for the versions listed
// in operator_versions.cpp; a node of any other version (one of a future opset, or an old form
// nobody wrote a reader for) is kept opaque, with its shapes from ONNX inference, rather than
// misread.
#include <cstdint>
#include <optional>
#include <string>

namespace graphsub {

// The version of default-domain operator `op` at `opset`; nullopt when the pinned ONNX release
// has no such operator at that opset.
std::optional<int64_t> onnx_operator_version(const std::string& op, int64_t opset);

// Whether graphsub reads version `version` of `op` (as converted or as evaluated at import).
bool reads_operator_version(const std::string& op, int64_t version);

}  // namespace graphsub
