#include "opt/search/bisect.h"

#include <fmt/format.h>

namespace graphsub::opt {

std::optional<size_t> first_bad_application(const Graph& original,
                                            const std::vector<const Transform*>& transforms,
                                            const std::vector<Step>& steps,
                                            const CheckOptions& check, Reporter& rep) {
  if (steps.empty()) return std::nullopt;
  auto graphs = replay_steps(original, transforms, steps, steps.size());
  // graphs[i] is the graph after steps[0..i]; find the first that fails, steps.size() when
  // none does.
  size_t lo = 0, hi = graphs.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (check_equivalent(original, graphs[mid], check, rep).ok)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == graphs.size()) return std::nullopt;
  return lo;
}

std::string describe_step(const Step& s) {
  return fmt::format("{} at {}", s.rule, s.where);
}

}  // namespace graphsub::opt
