#pragma once
// The fast CPU executor on oneDNN. Constructing it compiles a Graph once: one oneDNN primitive
// per node (conv/matmul with bias and fused activation, pools, eltwise, binary, concat,
// normalisations, reorders), memory for every tensor, and weights uploaded and reordered into
// the layouts their consumers prefer. run() then only executes; repeated runs reuse
// everything. Operators oneDNN does not cover run their reference kernel inside the same
// executor, so every graph with semantics runs. oneDNN threads with OpenMP (see
// OnednnOptions::threads).
//
// An executor is not safe to run from two threads at once (its buffers are shared by runs).
#include <memory>
#include <string>
#include <vector>

#include "exec/host_tensor.h"

namespace graphsub {

struct OnednnOptions {
  // Nodes whose inputs are all constants (weights with data, generator constants) run once at
  // compile time instead of on every run. Off for measuring such nodes.
  bool fold_constants = true;
  // Weights are run-time values: taken from the feeds when present, else from their data.
  // Off: weights with data are baked in at compile time, and a feed naming one is an error.
  bool feed_weights = false;
  // OpenMP threads oneDNN may use for this executor (compiling and running); 0: the OpenMP
  // default (OMP_NUM_THREADS, else every core the process may use). On a machine shared with
  // other busy processes, 1 avoids threads waiting for each other at every primitive.
  int threads = 0;
};

// The most OpenMP threads an executor accepts: 4 per hardware thread (at least 4). More only
// wait for cores (4,096 threads take minutes on a 2-node graph), and the OpenMP runtime
// crashes when asked for tens of thousands.
int max_executor_threads();

// How one node is executed: "convolution [src blocked 16c]", "reference kernel",
// "view", "folded: ..." for nodes computed at compile time.
struct NodePlan {
  NodeId node = 0;
  std::string op;
  std::string how;
};

// Seconds spent on one node in one run. `seconds` includes the layout conversions the node
// needs (its operands reordered into the layouts its primitive wants, and its output reordered
// to row-major when it is a graph output); `conversion_seconds` is that part alone.
struct NodeTime {
  NodeId node = 0;
  double seconds = 0;
  double conversion_seconds = 0;
};

class OnednnExecutor {
 public:
  // Throws Error for graphs it cannot run (opaque operators, unsupported ranks).
  explicit OnednnExecutor(const Graph& g, OnednnOptions opts = {});
  ~OnednnExecutor();
  OnednnExecutor(OnednnExecutor&&) noexcept;
  OnednnExecutor& operator=(OnednnExecutor&&) noexcept;

  // feeds: every graph input by name (and weights without data). Returns the graph outputs
  // in order, row-major. Throws Error on a missing feed or a shape mismatch.
  std::vector<HostTensor<float>> run(const TensorMap<float>& feeds);
  // Same, and records the time of every node that does work at run time, in execution order.
  std::vector<HostTensor<float>> run(const TensorMap<float>& feeds, std::vector<NodeTime>& times);

  const std::vector<NodePlan>& plan() const;
  size_t num_run_steps() const;  // primitives and host steps executed per run

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// True when the slices of a tensor of this shape along `axis` are contiguous byte ranges (all
// dimensions before the axis are 1). The executor then runs a split along that axis as
// zero-copy views, and a concat along it as nothing at all when its inputs' producers write
// plain row-major outputs (they write straight into the concatenated buffer). Cost models
// use this to price such data movement as free.
bool onednn_slices_are_contiguous(const Shape& shape, int64_t axis);

// The instruction set oneDNN dispatches to on this machine, e.g. "avx512_core_bf16".
std::string onednn_cpu_isa();

}  // namespace graphsub
