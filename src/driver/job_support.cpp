#include "driver/job_support.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace graphsub::driver {

std::map<std::string, std::string> search_options_text(const SearchJobOptions& s) {
  const auto& o = s.opt;
  return {{"alpha", fmt::format("{}", o.search.alpha)},
          {"budget", fmt::format("{}", o.search.budget)},
          {"time_limit", fmt::format("{}", o.search.time_limit_s)},
          {"max_queue", fmt::format("{}", o.search.max_queue)},
          {"target", s.target},
          {"cost", s.cost},
          {"threads", fmt::format("{}", o.threads)},
          {"seed", fmt::format("{}", o.seed)},
          {"rtol", fmt::format("{}", o.tolerance.rtol)},
          {"atol", fmt::format("{}", o.tolerance.atol)},
          {"builtin_rules", s.rules.builtin ? "true" : "false"},
          {"disabled_rules", fmt::format("{}", fmt::join(s.rules.disabled, ","))}};
}

}  // namespace graphsub::driver
