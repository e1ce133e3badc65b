#pragma once
// The one equivalence check of graphsub: an optimized graph against its original, both run
// on the same random inputs, every output compared within the one tolerance
// (exec/host_tensor.h: |got - ref| <= atol * max(1, max|ref|) + rtol * |ref|). The optimizer
// checks its result with it, the ONNX pipeline its model (on several input sets, at each
// symbolic dimension's values), the bisection to the first bad rewrite each replayed prefix,
// and the tests their rewrites. Graphs with opaque nodes are compared region by region
// between them (check/opaque_cut.h).
#include <cstdint>
#include <string>
#include <vector>

#include "exec/host_tensor.h"
#include "ir/graph.h"
#include "ir/report.h"

namespace graphsub {

// Which executor runs the two graphs: the reference kernels (the ground truth, slow on large
// models) or the oneDNN executor (fast; operators it lacks run their reference kernel).
enum class CheckExecutor { Reference, Onednn };

struct CheckOptions {
  int runs = 1;       // random input sets
  uint64_t seed = 1;  // of the first set; set k uses seed + 7919 k
  Tolerance tolerance;
  CheckExecutor executor = CheckExecutor::Reference;
};

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
  double max_abs() const;  // over all tensors
  double max_rel() const;
  // The first mismatching tensor and its figures; "" when ok.
  std::string failure() const;
};

// Weights with data keep their values; weights without data and inputs get random values by
// name (the same in both graphs). Throws Error when the graphs' inputs, outputs or opaque
// nodes do not correspond, or opts.runs < 1.
ResultCheck check_equivalent(const Graph& original, const Graph& optimized,
                             const CheckOptions& opts = {}, Reporter& rep = null_reporter());

// The check's cut tensors grouped by the op type of the opaque node that reads them, most
// frequent first: "35 x Clip: max abs diff 1e-06, max rel diff 2e-05, ok" (the worst of the
// group). `original` is the graph the check's first argument was.
std::vector<std::string> cut_summary_lines(const ResultCheck& rc, const Graph& original);

}  // namespace graphsub
