#pragma once
// State shared by the exporter's driver and its per-operator writers (internal).
#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/onnx_model.h"

namespace graphsub {

class ExportContext {
 public:
  ExportContext(const Graph& g, onnx::GraphProto& gp, int64_t opset) : g(g), gp(gp), opset(opset) {}

  const Graph& g;
  onnx::GraphProto& gp;
  int64_t opset;
  std::map<TensorRef, std::string> names;   // ONNX name of each IR tensor written so far
  std::set<std::string> used;               // every ONNX tensor and node name in use
  std::set<std::string> domains;            // non-default domains used by opaque nodes
  std::optional<std::set<TensorRef>> read;  // is_read()'s set
  std::set<NodeId> adds_as_sum;             // ExportOptions::adds_as_sum's nodes

  std::string fresh(const std::string& base);  // a new unique name
  // Whether a node or a graph output reads tensor `r` (the set is built on first use).
  bool is_read(TensorRef r);
  const std::string& name(TensorRef r) const;  // throws when the tensor was not written yet
  const Shape& shape(TensorRef r) const { return g.type(r).shape; }

  // Appends a node; `node_name` is made unique. Returns it for attributes.
  onnx::NodeProto& node(const std::string& op_type, std::vector<std::string> inputs,
                        std::vector<std::string> outputs, const std::string& node_name);
  // Constant initializers the writers need (shapes, pads, scalars).
  // A 1-d int64 tensor, or one of `shape` when given (the values fill it row-major).
  std::string int64_const(const std::string& base, const std::vector<int64_t>& values,
                          std::optional<Shape> shape = std::nullopt);
  // An int32 tensor of `shape` (the values must fit int32).
  std::string int32_const(const std::string& base, const std::vector<int64_t>& values,
                          const Shape& shape);
  std::string float_const(const std::string& base, float value);
};

// Attribute helpers.
void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v);
void set_attr(onnx::NodeProto& n, const std::string& name, float v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);

// Writes the ONNX nodes of one IR operator node. `outs` are the names its outputs must get.
void write_operator(ExportContext& c, NodeId id, const std::vector<std::string>& outs);

}  // namespace graphsub
