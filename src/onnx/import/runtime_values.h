#pragma once
// Shape computations that must stay computed at run time (internal to src/onnx).
// The importer evaluates shape computations at the concrete value it gives each symbolic
// input dimension (onnx/evaluate/shape_evaluator.h). Where such a value follows a symbolic
// dimension (an attention mask of ones of the input's size, a class token expanded to the batch,
// the positions 0..seq) and lands in the graph as a weight or as an operator's fixed parameter, the
// graph holds that one value and cannot be written back symbolic. The importer records what it
// folded (FoldTrace) at the imported value and at a second one; the values that differ and are
// fixed into the graph, with the folded values they were computed from, are imported again as nodes
// (opaque, written back as the model had them), which compute them at run time at any value.
// Reshape targets need not: the exporter derives them anew.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnx/evaluate/shape_evaluator.h"

namespace graphsub {

// What one import evaluated, by ONNX tensor name.
struct FoldTrace {
  std::map<std::string, std::string> values;                // dims and values, as text
  std::map<std::string, std::vector<std::string>> sources;  // the inputs it was computed from
  // Evaluated tensors read where the graph fixes their value: as an operator's input other
  // than Reshape's target (a weight or a parameter), or as a graph output.
  std::set<std::string> fixed_reads;
  // Slices removed as no-ops at this import's dimensions (ImportContext::no_op_slices).
  std::set<std::string> no_op_slices;

  void record(const std::string& name, const HostConstant& value, std::vector<std::string> inputs);
};

// The tensors to compute at run time: those fixed into the graph whose value at `alt`
// differs from `base`, and the differing tensors they are computed from.
std::set<std::string> runtime_values(const FoldTrace& base, const FoldTrace& alt);

}  // namespace graphsub
