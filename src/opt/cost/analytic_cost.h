#pragma once
// Analytic cost model: each operator takes the longer of its arithmetic at the machine's peak
// rate and its memory traffic at the machine's bandwidth (a roofline), plus the fixed cost of
// running one operator (larger for GEMM primitives). FLOPs and bytes come from the operator's
// own cost function (OpDef). Data movement the fast executor does without copying costs
// nothing: reshape and flatten, and split and concat along a contiguous axis (views, see
// onednn_slices_are_contiguous). Deterministic for a given MachineProfile.
#include "opt/cost/cost_model.h"
#include "opt/cost/machine_profile.h"

namespace graphsub::opt {

// True when the fast executor runs this configuration as a zero-copy view (no work at all).
bool runs_as_view(const OpConfig& c);
// True for the operators that run as one GEMM-like oneDNN primitive (matmul, conv, conv_add),
// which pay the machine's per-GEMM overhead.
bool runs_as_gemm(const OpDef& op);

class AnalyticCostModel : public CostModel {
 public:
  explicit AnalyticCostModel(MachineProfile m) : m_(std::move(m)) {}
  std::string name() const override { return "analytic"; }
  std::string assumptions() const override;
  const MachineProfile& machine() const { return m_; }

 protected:
  double config_cost(const OpConfig& c) override;

 private:
  MachineProfile m_;
};

}  // namespace graphsub::opt
