#pragma once
// Checks an optimized graph against its original on random inputs with the reference
// executor, and says exactly what was compared.
//
// Opaque nodes have no reference semantics, so both graphs are cut at them: each opaque
// node's outputs become extra inputs (the same random values in both graphs, matched by the
// node's name) and each tensor an opaque node reads becomes an extra output that is compared
// too. Since the optimizer never rewrites through an opaque node, the graphs are equal
// exactly when every region between opaque nodes computes the same function of its
// boundary, which is what the cut graphs test. Random boundary values may be outside the
// range the opaque node would produce (e.g. indices), so the check of a model with opaque
// nodes is a check of the rewritten regions, not of the whole model end to end: the
// ONNX Runtime cross-check (tools/ort_crosscheck.js) covers that.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/report.h"

namespace graphsub {

struct TensorCheck {
  std::string name;       // graph output, or "<opaque node> input <k>" at a cut
  bool boundary = false;  // a tensor read by an opaque node (not a graph output)
  double max_abs = 0;
  double max_rel = 0;     // |a-b| / max(|a|,|b|) over non-zero pairs
  double max_ref = 0;     // largest finite |value| of the original, for scale
  int64_t nonfinite = 0;  // NaN or inf values of the original (compared only for equality)
  bool ok = true;
};

struct ResultCheck {
  int runs = 0;
  std::string executor;  // "reference" or "onednn"
  double rtol = 0, atol = 0;
  size_t opaque_cut = 0;  // opaque nodes the graphs were cut at
  std::vector<TensorCheck> tensors;
  bool ok = true;
  // One line saying what was compared: "2 outputs on 3 random input sets" or, with opaque
  // nodes, "... of the regions between 4 opaque nodes (cut at their boundaries)".
  std::string scope() const;
};

// Element-wise |opt - orig| <= atol * max(1, max|orig|) + rtol * |orig| per tensor: the
// absolute tolerance scales with the tensor's magnitude so that deep networks with large
// activations are judged by their significant digits. Throws Error when the graphs' inputs,
// outputs or opaque nodes do not correspond.
// Which executor runs the two graphs: the reference kernels (the ground truth, slow on large
// models) or the oneDNN executor (fast; operators it lacks run their reference kernel).
enum class CheckExecutor { Reference, Onednn };

ResultCheck check_results(const Graph& original, const Graph& optimized, int runs,
                          uint64_t seed = 1, double rtol = 1e-4, double atol = 1e-5,
                          CheckExecutor executor = CheckExecutor::Reference,
                          Reporter& rep = null_reporter());

// The check's cut tensors grouped by the op type of the opaque node that reads them, most
// frequent first: "35 x Clip: max abs diff 1e-06, max rel diff 2e-05, ok" (the worst of the
// group). `original` is the graph the check's first argument was.
std::vector<std::string> cut_summary_lines(const ResultCheck& rc, const Graph& original);

// The graph with every opaque node cut out (see above); `boundary_names` receives the names
// of the extra outputs. Exposed for tests.
Graph cut_at_opaque(const Graph& g, std::vector<std::string>* boundary_names = nullptr);

}  // namespace graphsub
