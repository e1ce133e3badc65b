#include "driver/nchwc_layout_step.h"

#include <fmt/format.h>

#include "core/error.h"
#include "ort/nchwc_padding.h"

namespace graphsub::driver {

LayoutStep run_layout_step(const Graph& original, const opt::OptimizeResult& r,
                           ort::OrtCostModel& cost, const OnnxModelInfo& info,
                           std::optional<Graph>& padded_graph) {
  LayoutStep s;
  s.block = ort::nchwc_block_size();
  s.original = ort::predict_nchwc(original, s.block);
  s.search = ort::predict_nchwc(r.optimized, s.block);
  if (s.block <= 0) {
    s.verdict = "ONNX Runtime has no blocked layout on this CPU";
    return s;
  }
  s.reorder_us_per_mb = cost.reorder_us_per_mb();
  auto priced_ms = [&](double ops_us, const ort::NchwcLayout& l) {
    return (ops_us + cost.reorders_us(l.reorder_mb, l.reorders())) / 1e3;
  };
  s.search_ms = priced_ms(r.final_cost, s.search);
  std::optional<ort::ChannelPadding> p = ort::pad_channels_for_nchwc(r.optimized, s.block);
  s.other_block = ort::other_nchwc_block(s.block);
  if (p) s.left_out = p->left_out;
  if (!p || p->regions.empty()) {
    s.verdict = fmt::format("no channel padding gains (block {}{})", s.block,
                            p ? fmt::format(" and {}", s.other_block) : "");
    return s;
  }
  s.regions = p->regions;
  s.padded = p->after;
  if (s.other_block > 0) s.other_padded = p->other_after;
  // The padded weights have the imported shapes' channel counts only; a region whose spatial
  // or batch size a symbolic dimension sets must still hold at its other values.
  for (size_t d = 0; d < info.symbolic.size(); ++d) {
    try {
      instantiate_symbolic(p->graph, info, d);
    } catch (const Error& e) {
      s.verdict = fmt::format("channel padding holds only at {}'s imported value ({}): not timed",
                              info.symbolic[d].name, e.what());
      return s;
    }
  }
  s.padded_ms = priced_ms(cost.graph_cost(p->graph), p->after);
  if (s.padded_ms >= s.search_ms) {
    s.verdict = fmt::format(
        "channel padding predicted no cheaper ({:.3f} ms against {:.3f} ms, reorders "
        "included): not timed",
        s.padded_ms, s.search_ms);
    return s;
  }
  s.timed = true;
  s.verdict = fmt::format("channel padding predicted {:.3f} ms against {:.3f} ms: timed first",
                          s.padded_ms, s.search_ms);
  padded_graph = std::move(p->graph);
  return s;
}

}  // namespace graphsub::driver
