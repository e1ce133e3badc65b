#pragma once
// Shape computations that must stay computed at run time (internal to src/onnx).
// The importer evaluates shape computations at the concrete value it gives each symbolic
// input dimension (onnx/evaluate/shape_evaluator.h). Where such a value follows a symbolic
// dimension (an attention mask of ones of the input's size, the positions 0..seq) and lands in the
// graph as a weight or as an operator's fixed parameter, the graph holds that one value and cannot
// be written back symbolic. The importer records what it folded (FoldTrace) at the imported value
// and at a second one; the values that differ and are fixed into the graph, with the folded values
// they were computed from, are imported again as nodes (opaque, written back as the model had
// them), which compute them at run time at any value. Reshape targets need not: the exporter
// derives them anew; nor need Expand targets whose every dimension it can write anew (one copied
// from the input, fixed, or a multiple of the symbolic dimension), such as a grouped-query
// attention's repeat of the shared heads.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onnx/evaluate/shape_evaluator.h"

namespace graphsub {

// An Expand converted with an evaluated target: the target's name, the shapes it expanded.
struct ExpandRead {
  std::string target;
  std::vector<int64_t> input, output;
};

// What one import evaluated, by ONNX tensor name.
struct FoldTrace {
  std::map<std::string, std::string> values;                // dims and values, as text
  std::map<std::string, std::vector<std::string>> sources;  // the inputs it was computed from
  // Evaluated tensors read where the graph fixes their value: as an operator's input other
  // than Reshape's target (a weight or a parameter), or as a graph output.
  std::set<std::string> fixed_reads;
  // Slices removed as no-ops at this import's dimensions (ImportContext::no_op_slices).
  std::set<std::string> no_op_slices;
  // Expands converted with an evaluated target, by their output's name; the target is held
  // (computed at run time) only where the two imports' shapes cannot be written anew.
  std::map<std::string, ExpandRead> expand_reads;

  void record(const std::string& name, const HostConstant& value, std::vector<std::string> inputs);
};

// The output axes of an Expand that follow the dimension that differs between two imports
// (neither copied from the input nor equal in both), or nullopt where one is no multiple of
// it: the exporter writes a target anew from copied axes (1), equal ones (as they are) and
// multiples of one symbolic dimension (computed from an input's shape).
std::optional<std::vector<size_t>> expand_axes_following(const ExpandRead& base,
                                                         const ExpandRead& alt, int64_t value,
                                                         int64_t alt_value);

// The tensors to compute at run time: those fixed into the graph whose value at `alt`
// differs from `base` (and Expand targets that differ where expand_axes_following says no),
// and the differing tensors they are computed from. `value` and `alt_value`: the symbolic
// dimension's value in each import.
std::set<std::string> runtime_values(const FoldTrace& base, const FoldTrace& alt, int64_t value,
                                     int64_t alt_value);

}  // namespace graphsub
