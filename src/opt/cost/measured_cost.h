#pragma once
// Measured cost model: each distinct operator configuration is timed once on the oneDNN
// executor (a one-operator graph, its constant inputs baked in as weights, the fastest of
// several runs of the per-node timer), and the table is cached in a file keyed by
// configuration and CPU, reused across runs.
//
// Operators timed in isolation with hot caches underestimate a real run, badly for graphs of
// many small operators. The model therefore applies a calibration fitted from end-to-end
// runs of whole graphs (calibration.h):
//   cost(node) = scale * isolated_time + per_op_us + per_mb_us * megabytes moved
// and adds per_graph_us once per graph. Without a fitted calibration it uses the isolated
// times as they are, and says so in assumptions().
#include <map>
#include <string>

#include "ir/report.h"
#include "opt/cost/calibration.h"
#include "opt/cost/cost_model.h"
#include "opt/cost/machine_profile.h"

namespace graphsub::opt {

// Operators whose speed depends on the layout convolutions write their image operands in
// (pooling, concat): in real graphs these operands come straight from convolutions.
bool reads_conv_layouts(const OpDef& op);

// The graph a configuration is timed in: the operator alone, its constant inputs weights with
// data (the executor prepares them at compile time, as in the real graph), the others graph
// inputs, except that 4-d image operands of reads_conv_layouts() operators come from a 1x1
// convolution, so that they arrive in the layout a convolution writes (on an AVX2 machine an
// average pool over a plain [1,256,56,56] tensor ran oneDNN's reference kernel in 18.8 ms,
// the same pool after a convolution 0.1 ms). Returns the graph and the operator's node, the
// only one timed.
// With `conv_context` false the operator stands alone (the ONNX Runtime target profiles only
// the operator's own kernels, and a prefix convolution would add its time).
std::pair<Graph, NodeId> measurement_graph(const OpConfig& c, bool conv_context = true);

class MeasuredCostModel : public CostModel {
 public:
  // Loads <cache_dir>/op-costs-<cpu_tag(machine.threads)>.json when present. Operators are
  // timed with machine.threads threads.
  MeasuredCostModel(std::string cache_dir, MachineProfile machine, Reporter& reporter);
  ~MeasuredCostModel() override;  // saves new measurements (errors are reported, not thrown)

  std::string name() const override { return "measured"; }
  std::string assumptions() const override;
  double per_graph_cost() const override { return calib_.per_graph_us; }

  // Isolated time of one configuration, measuring it when not cached (microseconds).
  double isolated_us(const OpConfig& c);
  // The isolated time, raised to what streaming the operator's weights from memory takes (a
  // real run does not find them in the caches; GEMMs add the machine's per-GEMM overhead);
  // the term the calibration scales.
  double real_run_us(const OpConfig& c);
  // Sum of real_run_us, operator count and megabytes moved of a graph (views excluded): the
  // features the calibration is fitted on.
  CalibrationFeatures features(const Graph& g);

  const Calibration& calibration() const { return calib_; }
  void set_calibration(const Calibration& c);  // stored with the table on save()
  void save();
  size_t table_size() const { return table_.size(); }
  size_t measured_now() const { return measured_now_; }
  const std::string& path() const { return path_; }

 protected:
  double config_cost(const OpConfig& c) override;

 private:
  std::string path_;
  MachineProfile machine_;
  Reporter& reporter_;
  std::map<std::string, double> table_;  // config_key -> isolated microseconds
  Calibration calib_;
  bool dirty_ = false;
  size_t measured_now_ = 0;
};

}  // namespace graphsub::opt
