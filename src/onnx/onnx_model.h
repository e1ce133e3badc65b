#pragma once
// ONNX import and export. The importer turns an ONNX file into a Graph (operators graphsub
// knows become IR operators; any other operator becomes an opaque node with its shapes from
// ONNX shape inference, so nothing is ever dropped); the exporter writes a Graph back as an
// ONNX model that passes onnx::checker. This header exposes no protobuf types: what the
// exporter needs from the original file travels in OnnxModelInfo as plain data.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "exec/host_tensor.h"
#include "ir/graph.h"
#include "ir/report.h"

namespace graphsub {

// Opsets of the default ONNX domain that the importer accepts: 1 to the newest of the pinned
// ONNX release (newest_onnx_opset()). Operators are read with their meaning from opset 7 on
// (numpy broadcasting); a model of an older opset is kept as written, every node opaque.
// `--opset` writes opsets kMinConvertedOpset and up.
inline constexpr int64_t kMinOnnxOpset = 1;
inline constexpr int64_t kMinConvertedOpset = 7;
int64_t newest_onnx_opset();
struct OnnxModelInfo;
// The opset a model is written at: `requested` (--opset) when given, else the source model's
// default-domain opset, else 17.
int64_t written_onnx_opset(int64_t requested, const OnnxModelInfo* info);

// A graph input or output as declared in the file (names and element types are kept on
// export; symbolic dimensions are written back symbolic, see OnnxModelInfo::symbolic).
struct OnnxValue {
  std::string name;
  int32_t elem_type = 1;                // onnx::TensorProto_DataType (1 = FLOAT)
  Shape shape;                          // concrete shape in the imported graph
  std::vector<std::string> dim_params;  // symbolic names of dims in the file ("" when fixed)
};

// A symbolic dimension of the inputs ("batch"): the value the graph was imported with and
// the other value it was imported at too, to tell which dimensions of each tensor follow it.
struct SymbolicDim {
  std::string name;
  int64_t value = 1;
  int64_t alt = 3;
};

// What an exported model keeps from the file it came from.
struct OnnxModelInfo {
  int64_t ir_version = 8;
  std::vector<std::pair<std::string, int64_t>> opsets;  // (domain, version), default domain ""
  std::string producer_name, producer_version, graph_name, model_domain;
  int64_t model_version = 0;
  std::vector<std::pair<std::string, std::string>> metadata_props;
  std::vector<OnnxValue> inputs, outputs;
  // Weights graphsub cannot hold as float data (int64 shapes, fp16, ...): the serialized
  // onnx::TensorProto by weight name, written back unchanged.
  std::map<std::string, std::string> raw_initializers;
  // Model-local functions (serialized onnx::FunctionProto), which opaque nodes may call.
  std::vector<std::string> functions;
  // Symbolic dimensions of the inputs (none when every dimension is fixed). For each, the
  // output shapes of the IR nodes of the import at its alternate value, by node key (name and
  // operator, for keys unique in the imported graph), and at the imported values.
  std::vector<SymbolicDim> symbolic;
  std::vector<std::map<std::string, std::vector<Shape>>> alt_shapes;
  std::map<std::string, std::vector<Shape>> base_shapes;
  // The files the model was read from (the model file and its external data files, links
  // resolved): export_onnx_file never replaces any of them.
  std::vector<std::string> source_files;
  // The element type (onnx::TensorProto::DataType) of the model's floating-point tensors:
  // FLOAT (1), or FLOAT16 (10) / BFLOAT16 (16) for a half model, imported as float32 and
  // written back in its own type (onnx/half_precision.h).
  int32_t float_type = 1;
  int64_t opset() const;                     // version of the default domain
  StoredPrecision stored_precision() const;  // of float_type
};

struct OpaqueNodeInfo {
  std::string name, op_type, domain, reason;
};

struct ImportSummary {
  std::map<std::string, int64_t> onnx_op_counts;  // ONNX op_type (domain-qualified if not default)
  std::vector<OpaqueNodeInfo> opaque;             // kept as opaque nodes, in file order
  int64_t removed = 0;                            // Identity / Dropout nodes removed
  // x + 0, x - 0, x * 1, x / 1 with constants, Pads by 0, Casts to the same type, Slices that
  // keep their whole input: removed
  int64_t no_ops = 0;
  int64_t folded = 0;  // shape computations evaluated at import (Shape, Gather, Concat, ...)
  std::vector<std::string> notes;  // e.g. symbolic dimensions fixed
};

// Opaque nodes grouped by operator, most frequent first ("35 x Clip: <reason>"): one line
// per (op_type, reason), so that a model with many nodes of one kind reads in a few lines.
std::vector<std::string> opaque_summary_lines(const ImportSummary& s);

struct ImportOptions {
  // Concrete shapes for inputs with symbolic dimensions (by input name); other symbolic
  // dimensions take dim_values, else `default_dim` (with a note in the summary).
  std::map<std::string, Shape> input_shapes;
  // Values of symbolic dimensions by name (dim_param), for every input that has one;
  // input_shapes takes precedence. Names no input has are an error.
  std::map<std::string, int64_t> dim_values;
  // 2, not 1: at 1 a symbolic dimension looks like a broadcast one (x[1,s] + y[1,s] is an
  // elementwise sum at batch 1 and a broadcast at 3), so the graph imported would not be
  // the graph of other values.
  int64_t default_dim = 2;
  // Import once more at another value of each symbolic dimension to keep it symbolic on
  // export (OnnxModelInfo::symbolic); off: the dimensions stay at the values imported.
  bool keep_symbolic = true;

  // Limits that keep a small hostile file from making graphsub read or allocate without
  // bound (docs/onnx.md, "Limits"); each error names the file or tensor and the limit.
  // The model file: protobuf cannot parse more than 2 GiB - 1 in one message.
  int64_t max_file_bytes = 2147483647;
  // Elements of any one tensor (input, weight or node output): 2^30, 4 GiB as float32. The
  // largest tensors of real models (embedding tables of 256k x 4096) fit; the result check
  // runs every tensor on the reference executor, which could not hold much more.
  int64_t max_tensor_elements = int64_t{1} << 30;
  // Bytes of all tensors of the graph together (inputs, weights, node outputs): 16 GiB,
  // about what running the graph once for the result check allocates at most.
  int64_t max_total_bytes = int64_t{1} << 34;
};

struct ImportedModel {
  Graph graph;
  std::shared_ptr<const OnnxModelInfo> info;
  ImportSummary summary;
  // The model imported at the alternate value of each symbolic dimension (info->symbolic),
  // for checks at a second value.
  std::vector<Graph> alt_graphs;
};

// `g` (the imported graph or an optimized form of it) at the alternate value of symbolic
// dimension `p` of `info`: inputs, reshape targets and opaque outputs follow the dimension.
// Throws Error naming the node when `g` holds the dimension's value fixed (a weight, or an
// operator whose parameters bake it), i.e. when `g` is valid at the imported value only.
// `map`, when given, receives where each tensor of `g` is in the result.
Graph instantiate_symbolic(const Graph& g, const OnnxModelInfo& info, size_t p,
                           std::map<TensorRef, TensorRef>* map = nullptr);

// Starts the helper process ONNX's shape inference runs in (onnx/format/isolated_call.h),
// which the first import otherwise starts. A program that runs threads before it imports (the
// fuzzer: libFuzzer's memory-watching thread) calls it first, while it has one thread.
void prepare_onnx_import();

// Reads an ONNX file (external data is read from files next to it). Throws Error naming the
// file and the problem: unreadable or truncated file, unsupported opset, cycles, missing
// initializers or inputs, inconsistent shapes.
ImportedModel import_onnx_file(const std::string& path, const ImportOptions& opts = {},
                               Reporter& rep = null_reporter());
// Reads a model from serialized bytes; `base_dir` resolves external data ("" forbids it).
ImportedModel import_onnx_bytes(std::string_view bytes, const std::string& base_dir,
                                const ImportOptions& opts = {}, Reporter& rep = null_reporter(),
                                const std::string& label = "<memory>");

struct ExportOptions {
  // Weights are written to `<output>.data` next to the model when forced or when the total
  // weight size would exceed protobuf's 2 GiB message limit.
  bool external_data = false;
  int64_t external_threshold_bytes = int64_t{1} << 30;  // auto-switch above this total
  int64_t opset = 0;  // 0: the source model's opset, or 17 without a source
  std::string producer = "graphsub";
  // A runtime's lowering choice (the ort target's, ort/skip_norm_lowering.h): the Add nodes
  // it returns are written as ONNX Sum, which computes the same and which ONNX Runtime's
  // optimizer does not fuse into SkipLayerNormalization. Called once, with the graph as the
  // exporter holds it (weights pre-computed). Unset: every Add is written as Add.
  std::function<std::vector<NodeId>(const Graph&)> adds_as_sum;
};

// Throws Error when `output` (or its `.data` sidecar) is the same file as `input`: compared as
// files (std::filesystem::equivalent), so `./a.onnx`, absolute paths, hard and symbolic links
// are all caught. A missing output is never the input.
void ensure_output_is_not_input(const std::string& input, const std::string& output);

// Writes `g` as an ONNX model: weight-only subgraphs pre-computed, explicit pads, the
// original input/output names, element types and shapes (from `info` when given), opaque
// nodes written back with their original op_type, domain and attributes. The model is run
// through onnx::checker before it is written; a failure throws Error. export_onnx_file
// writes each file to a temporary file beside it and renames it into place when complete
// (a failed write leaves the old file and no partial file), and refuses to replace the
// files of `info->source_files`. Returns the written model's nodes counted as
// onnx_node_counts does.
std::map<std::string, int64_t> export_onnx_file(const Graph& g, const OnnxModelInfo* info,
                                                const std::string& path,
                                                const ExportOptions& opts = {});
// Writes a serialized model (an exported one, changed after export) as export_onnx_file writes
// what it exports.
std::map<std::string, int64_t> write_onnx_bytes(const std::string& model_bytes,
                                                const OnnxModelInfo* info, const std::string& path,
                                                const ExportOptions& opts = {});
// The same model as serialized bytes (weights inline; for tests and in-memory use).
std::string export_onnx_bytes(const Graph& g, const OnnxModelInfo* info,
                              const ExportOptions& opts = {});

// Nodes of a serialized model (or of a model file, external data not read) by op_type, keyed
// as ImportSummary::onnx_op_counts is (domain-qualified outside the default domain).
std::map<std::string, int64_t> onnx_node_counts(std::string_view model_bytes,
                                                const std::string& label = "<memory>");

}  // namespace graphsub
