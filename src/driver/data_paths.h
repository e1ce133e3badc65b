#pragma once
// Where graphsub finds the data it ships beside the code: the rule libraries (rules/), the
// axioms (specs/operators.axioms) and the ONNX Runtime worker (tools/ort_worker.py or .js).
// Resolved at run time, once, here; the stages below take the resolved paths.
#include <string>
#include <vector>

#include "opt/transforms/rule_library.h"

namespace graphsub::driver {

// The folder holding specs/operators.axioms: $GRAPHSUB_DATA_DIR when set (an error when it
// lacks the axioms); else the first such folder going up from the binary that contains this
// code (the graphsub executable, the test program, or the Python module's shared object:
// build/, build/tests/ and build/python/graphsub/ of a build inside the source tree); else
// the working directory. Throws Error naming the places it looked.
std::string data_dir();

// The relative path under data_dir() (the shipped names, as library headers state them).
inline constexpr const char* kAxiomsFile = "specs/operators.axioms";
std::string shipped_axioms();
// rules/default.rules (generated), rules/merges.rules, rules/activations.rules (generated
// over the activations of modern networks) and rules/indexing.rules (generated over
// reductions, expand, gather, nearest resize, broadcasting add and mul), those present.
std::vector<std::string> shipped_rule_files();
// The ONNX Runtime worker to start (docs/ort-worker.md): tools/ort_worker.py under the Python
// whose PyPI onnxruntime users deploy ($GRAPHSUB_PYTHON; else the virtual environment the
// binary is installed in, or the project's .venv beside a build in the source tree, when it
// holds onnxruntime); where there is none, tools/ort_worker.js under `node` (npm's
// onnxruntime-node). GRAPHSUB_ORT_WORKER=node or =python forces one (python without a
// Python found: `python3`); another value is an Error naming it.
struct OrtWorkerCommand {
  std::string interpreter, script;
};
OrtWorkerCommand ort_worker_command();

// The generated rules that introduce ONNX Runtime's fused operators (src/ops/fused_ops.cpp),
// loaded with --ort-contrib-ops only: rules/ort_fused.rules (enumerated: skip normalizations,
// gelus, FusedMatMul), rules/ort_attention.rules (unfolded from MultiHeadAttention's
// definition, `graphsub unfold`) and rules/onnx_attention.rules (ONNX's Attention over
// grouped key/value heads, unfolded alike; the search writes it into files of opset 23 on
// only, OpDef::onnx_since). Throws Error naming a file missing from the data folder.
std::vector<std::string> shipped_ort_fused_rules();

// `o` with the shipped rule files when it names none, and the shipped axioms (when a data
// folder is found).
opt::RuleLibraryOptions resolved(opt::RuleLibraryOptions o);

}  // namespace graphsub::driver
