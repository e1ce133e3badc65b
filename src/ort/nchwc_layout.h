#pragma once
// ONNX Runtime's blocked layout on the CPU, predicted for a graph as graphsub writes it.
// At level "all" on x86-64 ONNX Runtime rewrites convolutions into its NCHWc layout (channels
// in blocks of 8 with AVX2, 16 with AVX-512: MLAS's choice for the CPU) and carries a few
// operators in it; where a blocked tensor meets any other operator it inserts a ReorderOutput,
// and where a blocked convolution or pool reads a plain tensor a ReorderInput. Those reorders
// are copies of whole tensors, 3-16% of the kernel time of today's CNN exports
// (bench/ort_layout.py), and they are not in the cost model's per-operator prices, which time
// each operator alone. The conditions, from ONNX Runtime's NCHWc transformer and measured on
// ONNX Runtime 1.31 (where they differ, the measurement is what is encoded):
//  - a convolution (fp32, constant weights) runs blocked when, ungrouped, its input channels
//    are fewer than a block (it then reads the plain tensor) or a multiple of 4; depthwise,
//    when its channels are a multiple of 4; otherwise grouped, when each group's input and
//    output channels are a multiple of the block (output channels are padded either way);
//  - max and average pools run blocked when their channels are a multiple of the block; the
//    global pools only where their input is already blocked;
//  - Relu, Sigmoid, Tanh and BatchNormalization (constant statistics) stay blocked on a
//    blocked input; Add and Mul when every input is blocked with the same shape (no
//    broadcast: a squeeze-excitation's scale forces a reorder); Concat along channels when
//    every input is blocked and a multiple of the block.
// tests/python/test_nchwc_layout.py compares the prediction with what ONNX Runtime writes.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace graphsub::ort {

// MLAS's NCHWc block on this CPU: 16 with AVX-512F, 8 on other x86-64, 0 where ONNX Runtime
// has no NCHWc kernels (then nothing is predicted blocked).
int nchwc_block_size();

struct NchwcLayout {
  int block = 0;
  std::vector<uint8_t> blocked;  // per node slot: output 0 is in the blocked layout
  int blocked_convs = 0;         // convolutions ONNX Runtime runs blocked
  int plain_convs = 0;           // and those it leaves in NCHW
  int reorder_inputs = 0, reorder_outputs = 0;
  double reorder_mb = 0;  // bytes the reorders copy in one run, in MB (10^6)

  int reorders() const { return reorder_inputs + reorder_outputs; }
  std::string summary() const;  // "12 of 14 convolutions blocked, 9 reorders (3.2 MB a run)"
};

NchwcLayout predict_nchwc(const Graph& g, int block);

// Whether a convolution with weights [out, in_per_group, kh, kw] of `groups` groups runs
// blocked, and whether it then reads its input blocked (false: the input stays plain).
struct NchwcConvFit {
  bool blocked = false;
  bool reads_blocked = false;
};
NchwcConvFit nchwc_conv_fit(int64_t out_channels, int64_t in_per_group, int64_t groups, int block);

}  // namespace graphsub::ort
