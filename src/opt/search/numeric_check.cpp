#include "opt/search/numeric_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "exec/reference_executor.h"

namespace graphsub::opt {

CheckResult check_equivalent(const Graph& original, const Graph& optimized, uint64_t seed,
                             double rtol) {
  if (original.outputs().size() != optimized.outputs().size())
    throw Error(fmt::format("check: the optimized graph has {} outputs, the original {}",
                            optimized.outputs().size(), original.outputs().size()));
  TensorMap<float> feeds = random_feeds(original, seed, true);
  for (NodeId w : original.weights())
    if (original.node(w).data) feeds.erase(original.node(w).name);
  auto want = run_reference(original, feeds);
  auto got = run_reference(optimized, feeds);
  CheckResult r;
  for (size_t i = 0; i < want.size(); ++i) {
    double scale = 0;
    for (float v : want[i].data) {
      if (!std::isfinite(v))
        throw Error(
            fmt::format("check: output '{}' of the original graph is not finite on random "
                        "inputs (overflow?), so it cannot be compared",
                        original.outputs()[i].name));
      scale = std::max(scale, static_cast<double>(std::fabs(v)));
    }
    Difference d = compare(got[i], want[i], rtol, 1e-5 * scale);
    r.max_abs_diff = std::max(r.max_abs_diff, d.max_abs);
    r.max_rel_diff = std::max(r.max_rel_diff, d.max_rel);
    if (!d.ok && r.ok) {
      r.ok = false;
      r.detail = fmt::format(
          "output '{}' differs: max abs difference {:.3g} (output scale {:.3g}), "
          "max relative {:.3g}, shapes {} vs {}",
          original.outputs()[i].name, d.max_abs, scale, d.max_rel, shape_str(got[i].shape),
          shape_str(want[i].shape));
    }
  }
  return r;
}

}  // namespace graphsub::opt
