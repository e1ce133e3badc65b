#pragma once
// State shared by the importer's driver and its per-operator converters (internal).
#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/evaluate/shape_evaluator.h"
#include "onnx/format/node_attrs.h"
#include "onnx/format/runtime_operators.h"
#include "onnx/onnx_model.h"

namespace graphsub {

// A converter throws Decline when a node is legal ONNX but outside what graphsub's IR
// expresses exactly (e.g. a 3-d convolution); the driver then keeps it as an opaque node.
struct Decline {
  std::string reason;
};

// Element type and (when known) shape of an ONNX tensor, from the file and shape inference.
struct OnnxTensorInfo {
  int32_t elem_type = 0;
  std::optional<Shape> shape;
};

class ImportContext {
 public:
  ImportContext(Graph& g, OnnxModelInfo& info, ImportSummary& summary, int64_t opset)
      : g(g), info(info), summary(summary), opset(opset) {}

  Graph& g;
  OnnxModelInfo& info;
  ImportSummary& summary;
  int64_t opset;
  std::map<std::string, TensorRef> tensors;           // ONNX tensor name -> IR tensor
  std::map<std::string, OnnxTensorInfo> onnx_types;   // from the file and shape inference
  std::map<NodeId, std::vector<int64_t>> int_values;  // values of integer weights
  std::map<std::string, const onnx::TensorProto*> initializers;
  std::set<std::string> used_names;  // every tensor and weight name, to keep new ones unique
  // Values known at import (Constant outputs, evaluated shape computations, small
  // initializers read by them), by ONNX tensor name. An IR weight is made for one only when
  // an operator that is not evaluated reads it (materialize).
  std::map<std::string, HostConstant> constants;
  // Constants the converter of the current node must not see: values it reads that are
  // computed at run time (runtime_values.h).
  std::set<std::string> hidden;
  // Slices that copy their whole input at the dimensions imported, removed as no-ops (by
  // output name), and those to keep anyway: a no-op at this value of a symbolic dimension
  // only, as the import at its other value showed (import_model).
  std::set<std::string> no_op_slices;
  std::set<std::string> slices_kept;

  // The value of a tensor when known at import: a constant, or an initializer of an element
  // type the evaluator holds (loaded on first use); null otherwise.
  const HostConstant* constant(const std::string& name);
  // The same, hidden or not: the value at the dimensions imported (for shape inference).
  const HostConstant* known_value(const std::string& name);
  // The IR weight holding constant `name` (made on first use).
  TensorRef materialize(const std::string& name);

  // "node 'conv1' (Conv)"
  static std::string label(const onnx::NodeProto& n);

  // Input i's name for messages; "<input i not given>" when the node has fewer inputs (a
  // missing input must not be read: protobuf aborts on an index past the end).
  static std::string input_name(const onnx::NodeProto& n, int i);
  bool has_input(const onnx::NodeProto& n, int i) const {
    return i < n.input_size() && !n.input(i).empty();
  }
  // The IR tensor of input i (throws Error when absent). data() additionally requires a
  // float tensor, declining the node otherwise (graphsub's semantics are float only).
  TensorRef input(const onnx::NodeProto& n, int i);
  TensorRef data(const onnx::NodeProto& n, int i);
  const TensorType& type(TensorRef r) const { return g.type(r); }
  const Shape& shape(TensorRef r) const { return g.type(r).shape; }

  // Integer values of a constant input (initializer, Constant, evaluated shape computation);
  // nullopt when the input is computed at run time.
  std::optional<std::vector<int64_t>> const_ints(const onnx::NodeProto& n, int i);
  // Float data of a weight input with data; null otherwise.
  const std::vector<float>* const_floats(TensorRef r) const;
  // The ONNX-inferred shape of a node's output i, when known.
  std::optional<Shape> inferred_shape(const onnx::NodeProto& n, int i) const;

  // Adds an IR operator named after the node (errors carry the node's label).
  TensorRef op(const onnx::NodeProto& n, std::string_view op, std::vector<TensorRef> in,
               Attrs attrs = {});
  std::vector<TensorRef> op_multi(const onnx::NodeProto& n, std::string_view op,
                                  std::vector<TensorRef> in, Attrs attrs = {});
  // New weights created during import (transposed or scaled copies, folded shapes).
  TensorRef float_weight(const std::string& base, Shape shape, std::vector<float> values);
  TensorRef int_weight(const std::string& base, Shape shape, std::vector<int64_t> values);
  std::string unique_name(const std::string& base);

  // Name given to the IR nodes of the ONNX node being converted.
  std::string node_name;
};

using Converter = std::vector<TensorRef> (*)(ImportContext&, const onnx::NodeProto&);
// Converters of the default ONNX domain by op_type (null when graphsub has no mapping).
Converter find_converter(const std::string& op_type);

// The families of converters, one file each.
void add_math_converters(std::map<std::string, Converter>& table);   // elementwise, Gemm, MatMul
void add_nn_converters(std::map<std::string, Converter>& table);     // Conv, pools, norms
void add_shape_converters(std::map<std::string, Converter>& table);  // Concat, Reshape, Pad, ...

// A node of a runtime's domain (com.microsoft) as the fused operator `r` names
// (import_runtime.cpp); throws Decline where the node has a form the operator does not.
std::vector<TensorRef> convert_runtime_operator(ImportContext& c, const onnx::NodeProto& n,
                                                const RuntimeOperator& r);

// Throws Error naming the node and attribute when a windowed operator (Conv, pools, also
// those kept opaque) has strides, dilations or kernel sizes below 1 or negative pads: checked
// before ONNX shape inference, which divides by them.
void check_window_attributes(const onnx::NodeProto& n);

}  // namespace graphsub
