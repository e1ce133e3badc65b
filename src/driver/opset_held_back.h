#pragma once
// Rewrites the written file's opset keeps out. An operator newer than the file's opset
// (OpDef::onnx_since: ONNX's Attention from 23) is never introduced there (the cost model
// prices it as not run); where a rule would have introduced one, the user is told how many
// places and which opset holds it, so that `--opset` can ask for it.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "opt/transforms/rule_library.h"

namespace graphsub::driver {

struct HeldBackOperator {
  std::string op;     // the IR operator ("attention")
  int64_t since = 0;  // its first ONNX opset
  size_t places = 0;  // distinct tensors a rule would have computed with it
};

// For each rule of `lib` whose target holds an operator newer than `opset`, its applications
// to `g`; per operator, the distinct tensors they replace. Empty when none (or opset 0).
std::vector<HeldBackOperator> held_back_by_opset(const Graph& g, const opt::RuleLibrary& lib,
                                                 int64_t opset);

// "30 places could use the operator attention, which ONNX has from opset 23; the file is
// written at opset 17: --opset 23 lets the search consider it", or "" when nothing is held
// back.
std::string describe_held_back(const std::vector<HeldBackOperator>& held, int64_t opset);

}  // namespace graphsub::driver
