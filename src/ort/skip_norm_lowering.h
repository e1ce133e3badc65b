#pragma once
// ONNX Runtime's optimizer at level "all" fuses an Add that feeds a LayerNormalization into
// one SkipLayerNormalization (and Add + SimplifiedLayerNormalization into
// SkipSimplifiedLayerNormalization) wherever it knows the shapes, whether or not that kernel
// is faster. On this project's machine ONNX Runtime 1.31.1 runs SkipLayerNormalization at
// 1 x 64 x 768 in 268 us against 44 us for the two nodes it replaces (1 thread), and torch's
// nn.TransformerEncoder ran 1.02-1.08x faster with its 12 residual Adds written as Sum, which
// computes the same and is not fused. The search never introduces the fused node where it is
// slower (the cost model prices it by running it), but it cannot see a fusion the runtime
// makes after graphsub has written the file: this lowering does, pricing each such Add's
// fused form against its two nodes with the same cost model, and writing the Add as Sum
// where the fused kernel is the slower one. The latency guard then times the files written
// so, as every candidate.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "opt/cost/cost_model.h"

namespace graphsub::ort {

// A site ONNX Runtime would fuse: an Add (ewadd or add) whose two inputs have one shape and
// whose output a normalization over the last axis (layernorm, rms_norm) reads as its input 0.
struct SkipNormSite {
  NodeId add = 0, norm = 0;
};
std::vector<SkipNormSite> skip_norm_sites(const Graph& g);

// The fused kernel of a site priced against its Add and normalization together; the fused
// one is the slower when above them by more than kSlowerMargin (the price table's noise is a
// few percent; the gap measured, 6x). Both 0 where the fused operator does not take the form.
inline constexpr double kSlowerMargin = 1.25;
struct SkipNormPrices {
  double fused_us = 0, unfused_us = 0;
  bool slower() const { return unfused_us > 0 && fused_us > kSlowerMargin * unfused_us; }
};

// The decision, made ahead: price() runs the fused and unfused forms of each site of a graph
// in ONNX Runtime (through the cost model) before the latency guard, whose worker times
// models and cannot price at the same time; adds() then answers for any graph from those
// prices alone, by each site's configuration (a site not priced stays an Add).
class SkipNormLowering {
 public:
  void price(opt::CostModel& cost, const Graph& g);
  std::vector<NodeId> adds(const Graph& g) const;  // the Adds to write as Sum
  // One line for the report ("" when no Add of `g` is written as Sum).
  std::string describe(const Graph& g) const;

 private:
  std::map<std::string, SkipNormPrices> prices_;  // by the site's configuration
};

}  // namespace graphsub::ort
