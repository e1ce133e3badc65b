#include "opt/cost/analytic_cost.h"

#include <fmt/format.h>

#include <algorithm>

#include "exec_onednn/onednn_executor.h"

namespace graphsub::opt {

std::string AnalyticCostModel::assumptions() const {
  return fmt::format("roofline on {}", m_.str());
}

bool runs_as_view(const OpConfig& c) {
  const std::string& op = c.op->name;
  if (op == "reshape" || op == "flatten") return true;
  // Splits and concats are views only on row-major data. Image tensors (rank 4) come from
  // convolutions in blocked layouts: a split reorders them first, and a concat cannot take
  // them in place, so those are priced as the copies they are.
  if (op == "split" && !c.in.empty() && c.in[0].rank() < 4)
    return onednn_slices_are_contiguous(c.in[0].shape, c.attrs.i("axis"));
  if (op == "concat" && !c.out.empty() && c.out[0].rank() < 4)
    return onednn_slices_are_contiguous(c.out[0].shape, c.attrs.i("axis"));
  return false;
}

bool runs_as_gemm(const OpDef& op) {
  return op.name == "matmul" || op.name == "conv" || op.name == "conv_add";
}

double AnalyticCostModel::config_cost(const OpConfig& c) {
  if (runs_as_view(c)) return 0;
  OpCost oc = op_cost(*c.op, c.attrs, c.in, c.out);
  double compute_us = oc.flops / (m_.peak_gflops * 1e3);
  double memory_us = oc.bytes / (m_.bandwidth_gbs * 1e3);
  return std::max(compute_us, memory_us) + m_.overhead_us(runs_as_gemm(*c.op));
}

}  // namespace graphsub::opt
