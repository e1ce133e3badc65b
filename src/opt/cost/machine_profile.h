#pragma once
// What the analytic cost model knows of the machine: its measured peak arithmetic rate (a
// large matmul on the fast executor, i.e. what real kernels reach), its memory bandwidth (a
// copy of buffers far larger than the caches), and the fixed cost of running one operator,
// for element-wise and similar primitives and for GEMM-based ones (matmul, conv), each taken
// from end-to-end runs of long chains of tiny operators on the fast executor.
// Measuring takes about a second; the result is cached per CPU model so that later runs (and
// their search results) are reproducible.
#include <string>

#include "ir/report.h"

namespace graphsub::opt {

struct MachineProfile {
  std::string cpu;  // /proc/cpuinfo model name
  std::string isa;  // what oneDNN dispatches to
  int threads = 1;
  double peak_gflops = 0;     // FP32, all threads
  double bandwidth_gbs = 0;   // bytes read + written per second
  double op_overhead_us = 0;  // per operator executed
  // Per matmul or conv executed (0: op_overhead_us). A GEMM primitive dispatches more work per
  // call than an element-wise one.
  double gemm_overhead_us = 0;

  double overhead_us(bool gemm) const {
    return gemm && gemm_overhead_us > 0 ? gemm_overhead_us : op_overhead_us;
  }

  // "AMD EPYC (2 threads, avx2): 60.1 GFLOP/s, 9.8 GB/s, 2.1 us/op, 4.0 us/GEMM"
  std::string str() const;
};

std::string cpu_model_name();
// threads: OpenMP threads of the fast executor (0: all cores the process may use).
MachineProfile measure_machine(int threads);
// The profile cached in `cache_dir` for this CPU and thread count, measured and stored there
// when absent.
MachineProfile cached_machine_profile(const std::string& cache_dir, int threads,
                                      Reporter& reporter);

// The cache directory: $GRAPHSUB_CACHE_DIR, else $XDG_CACHE_HOME/graphsub, else
// ~/.cache/graphsub, else .graphsub-cache in the working directory.
std::string default_cache_dir();
// A short stable tag for the CPU and thread count (hash of model name, ISA and threads) for
// file names.
std::string cpu_tag(int threads);
// The thread count an executor with `threads` (0: default) actually uses.
int effective_threads(int threads);

}  // namespace graphsub::opt
