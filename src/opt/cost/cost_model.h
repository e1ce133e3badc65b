#pragma once
// Cost models: the predicted run time of a graph, in microseconds, as the sum of per-operator
// costs. Operators that read only weights and constants are computed ahead of run time
// (weight pre-computation) and cost nothing; graph inputs and weights cost nothing.
// Models differ in how they price one operator configuration; the base class memoises prices
// by configuration, so a search that sees the same configuration many times prices it once.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace graphsub::opt {

// What a cost model sees of one operator: operator, attributes, input and output types,
// and which inputs are constant (weights: a fast executor prepares them once). Types keep
// their split points (a split at the recorded cut needs them to be rebuilt and measured).
struct OpConfig {
  const OpDef* op = nullptr;
  Attrs attrs;
  std::vector<TensorType> in, out;
  std::vector<uint8_t> in_constant;
};

OpConfig op_config(const Graph& g, NodeId id, const std::vector<uint8_t>& constant);
// Canonical text of a configuration (operator, attributes, input/output dtype, layout, shape,
// constant inputs marked "w:"); split points are not part of it (they cost nothing).
std::string config_key(const OpConfig& c);

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string name() const = 0;  // "analytic" or "measured"
  // The runtime whose fused kernels this model prices (OpDef::runtime: "onnxruntime" for the
  // ort target); "" for graphsub's own executor. Another runtime's fused operator costs
  // kNotRunHere: the search never introduces one for a target that cannot run it, and takes
  // one out where a rule can.
  virtual std::string_view runtime() const { return ""; }
  static constexpr double kNotRunHere = 1e12;  // microseconds
  // The opset of the ONNX file the graph will be written to (0: none, or any): an operator
  // that opset lacks (OpDef::onnx_since) costs kNotRunHere, so the search never writes one
  // the file cannot hold.
  void set_written_opset(int64_t opset) { written_opset_ = opset; }
  int64_t written_opset() const { return written_opset_; }
  // One line saying what the model assumed: the machine, its measured peaks, calibration.
  virtual std::string assumptions() const = 0;

  // Cost of node `id` of `g` given the constant flags of its graph (constant_nodes()).
  double node_cost(const Graph& g, NodeId id, const std::vector<uint8_t>& constant);
  // The same for a non-constant operator given by its parts (a node priced before it is in a
  // graph): input types and constant flags per input, output types. Same memo and values.
  double node_cost(const OpDef& op, const Attrs& attrs, std::span<const TensorType* const> in,
                   std::span<const uint8_t> in_constant, const std::vector<TensorType>& out);
  // Sum over the graph's nodes, plus per_graph_cost().
  double graph_cost(const Graph& g);
  // Fixed cost of running any graph (calibrated models); 0 by default.
  virtual double per_graph_cost() const { return 0; }

 protected:
  virtual double config_cost(const OpConfig& c) = 0;

 private:
  std::unordered_map<uint64_t, double> memo_;  // by hash of what config_key spells (lookup only)
  std::vector<unsigned char> key_bytes_;       // node_cost's scratch for that hash
  int64_t written_opset_ = 0;
  bool not_run_here(const OpDef& op) const {
    return (!op.runtime.empty() && op.runtime != runtime()) ||
           (written_opset_ > 0 && op.onnx_since > written_opset_);
  }
};

}  // namespace graphsub::opt
