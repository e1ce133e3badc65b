#include "opt/analytic_cost.h"

#include <fmt/format.h>

#include <algorithm>

namespace graphsub::opt {

std::string AnalyticCostModel::assumptions() const {
  return fmt::format("roofline on {}", m_.str());
}

double AnalyticCostModel::config_cost(const OpConfig& c) {
  OpCost oc = op_cost(*c.op, c.attrs, c.in, c.out);
  double compute_us = oc.flops / (m_.peak_gflops * 1e3);
  double memory_us = oc.bytes / (m_.bandwidth_gbs * 1e3);
  return std::max(compute_us, memory_us) + m_.op_overhead_us;
}

}  // namespace graphsub::opt
