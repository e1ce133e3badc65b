#pragma once
// The ONNX Runtime cost target: each operator configuration is exported as a one-operator
// ONNX model (its constant inputs as initializers, as in the real graph, where ONNX Runtime
// pre-packs them) and run in ONNX Runtime through the worker with per-node profiling; its
// price is the median kernel time of every kernel ONNX Runtime ran for it (a configuration
// whose activation ONNX Runtime fuses into the convolution shows as one fused kernel; the
// layout reorders it inserts around an operator run alone are left out) plus ONNX Runtime's
// per-kernel dispatch cost, measured once on a chain of tiny operators. A one-operator model runs
// with its weights in the cache; in a model whose weights exceed the cache they stream from memory
// on every run, so a price is never below the time to read the operator's constant inputs at the
// streaming rate measured once end to end on a chain of matmuls with 128 MB of weights (a roofline:
// NasRNN's matmuls ran 8x slower in the model than alone). Prices are cached per CPU, thread count
// and runtime version.
#include <map>
#include <memory>
#include <string>

#include "ir/report.h"
#include "opt/cost/cost_model.h"
#include "ort/ort_worker.h"

namespace graphsub::ort {

class OrtCostModel : public opt::CostModel {
 public:
  // Loads <cache_dir>/ort-op-costs-<cpu>-ort<version>.json when present.
  OrtCostModel(Worker& worker, std::string cache_dir, int threads, Reporter& reporter);
  ~OrtCostModel() override;  // saves new measurements (errors are reported, not thrown)

  std::string name() const override { return "ort"; }
  std::string_view runtime() const override { return "onnxruntime"; }
  std::string assumptions() const override;

  double per_kernel_us() const { return per_kernel_us_; }
  double weight_us_per_mb() const { return weight_us_per_mb_; }
  // What ONNX Runtime's layout reorders (ReorderInput, ReorderOutput) cost per MB they copy,
  // from its profile of one blocked convolution's two reorders; measured once, cached with
  // the table. Per-configuration prices leave reorders out (they depend on the neighbours);
  // the layout step prices a graph's predicted reorders with it (ort/nchwc_layout.h).
  double reorder_us_per_mb() const { return reorder_us_per_mb_; }
  // The predicted reorders of a graph: `mb` copied by `count` reorder kernels.
  double reorders_us(double mb, int count) const {
    return reorder_us_per_mb_ * mb + per_kernel_us_ * count;
  }
  size_t table_size() const { return table_.size(); }
  void save();

 protected:
  double config_cost(const opt::OpConfig& c) override;

 private:
  // Kernel time (us) and kernel count of one exported model, by per-node profiling.
  std::pair<double, int> profile_model(const std::string& path);
  double measure_per_kernel_us();
  double measure_weight_us_per_mb();
  double measure_reorder_us_per_mb();
  void ensure_per_kernel_cost();  // measured once, then cached with the table
  // The price's floor: reading the configuration's constant inputs from memory.
  double streaming_us(const opt::OpConfig& c) const;
  void make_scratch();

  Worker& worker_;
  int threads_;
  Reporter& reporter_;
  std::string path_, scratch_;
  std::map<std::string, double> table_;  // config key -> price (us)
  double per_kernel_us_ = -1;
  double weight_us_per_mb_ = -1;
  double reorder_us_per_mb_ = -1;
  bool dirty_ = false;
  size_t measured_now_ = 0;
};

}  // namespace graphsub::ort
