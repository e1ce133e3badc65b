#pragma once
// Reading an ONNX node: its label for messages, typed attributes, axes (internal to
// src/onnx). Errors name the node and the attribute.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace graphsub {

// "node 'conv1' (Conv)", with the domain before the operator outside the default domain.
std::string node_label(const onnx::NodeProto& n);

// Typed access to a node's attributes; errors name the node and the attribute.
class NodeAttrs {
 public:
  NodeAttrs(const onnx::NodeProto& n, std::string label) : n_(n), label_(std::move(label)) {}
  bool has(const std::string& name) const { return find(name) != nullptr; }
  int64_t i(const std::string& name, int64_t def) const;
  float f(const std::string& name, float def) const;
  std::string s(const std::string& name, const std::string& def) const;
  std::vector<int64_t> ints(const std::string& name, std::vector<int64_t> def) const;
  std::vector<float> floats(const std::string& name, std::vector<float> def) const;
  const onnx::TensorProto* tensor(const std::string& name) const;

 private:
  const onnx::AttributeProto* find(const std::string& name) const;
  const onnx::AttributeProto& typed(const std::string& name, int type) const;
  const onnx::NodeProto& n_;
  std::string label_;
};

// Normalises an axis attribute against a rank, throwing Error naming the node.
int64_t onnx_axis(const onnx::NodeProto& n, int64_t axis, int64_t rank);

}  // namespace graphsub
