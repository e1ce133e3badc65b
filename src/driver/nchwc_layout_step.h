#pragma once
// The ort target's layout step, between the search and the latency guard: ONNX Runtime's
// blocked layout predicted for the original and the search's choice (ort/nchwc_layout.h),
// and the search's choice with channels padded to the block (ort/nchwc_padding.h) where that
// runs more convolutions blocked. Both graphs are priced with their reorders (the cost
// model's per-operator prices plus the predicted reorders at the measured rate); the padded
// one goes to the guard first when it is predicted cheaper, and is written only as the guard
// and the check allow. The search itself prices operators alone, so it cannot see a reorder:
// the layout is a property of the whole graph.
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_model.h"
#include "opt/search/optimize.h"
#include "ort/nchwc_layout.h"
#include "ort/ort_cost_model.h"

namespace graphsub::driver {

struct LayoutStep {
  int block = 0;                     // MLAS's block on this CPU (0: none)
  ort::NchwcLayout original;         // predicted for the original as imported
  ort::NchwcLayout search;           // and for the search's choice
  std::vector<std::string> regions;  // the regions padded ("440 -> 448 channels: ...")
  // The other block size the padding must not lose at, what the padded graph is predicted to
  // run there, and the regions left as they are because they gain at `block` only.
  int other_block = 0;
  std::optional<ort::NchwcLayout> other_padded;
  std::vector<std::string> left_out;
  std::optional<ort::NchwcLayout> padded;  // predicted for the padded graph
  double reorder_us_per_mb = 0;            // the cost model's measured rate
  double search_ms = 0, padded_ms = 0;     // predicted, reorders included
  bool timed = false;   // the padded graph went to the guard (first: predicted cheaper)
  std::string verdict;  // one line: what the step found and did
  // After the guard: the layout of what is written, and whether it is the padded graph.
  std::optional<ort::NchwcLayout> written;
  bool written_padded = false;
};

// `padded_graph` receives the padded graph when the guard is to time it (step.timed).
LayoutStep run_layout_step(const Graph& original, const opt::OptimizeResult& r,
                           ort::OrtCostModel& cost, const OnnxModelInfo& info,
                           std::optional<Graph>& padded_graph);

}  // namespace graphsub::driver
