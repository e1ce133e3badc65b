#pragma once
// Channel padding for ONNX Runtime's blocked layout: tensors whose channel count is not a
// multiple of the NCHWc block (regnet's 440 channels in groups of 8 at block 16) keep the
// convolutions that read and write them out of the layout, with reorders around each. Here a
// region of such tensors (joined through operators that act per channel: activations,
// element-wise operators, pools, batch norms, grouped convolutions of as many channels) is
// widened to the next multiple of 16 (a whole number of blocks of either size), exactly:
//  - the convolutions that write into the region get zero output channels (zero weights and
//    bias), so the added channels hold finite values (0, or an activation of 0);
//  - per-channel constants are padded (batch norms with a unit variance), grouped
//    convolutions get the added groups with zero weights, then as many groups merged into
//    one (block-diagonal weights) as make each group a block wide;
//  - every convolution that reads the region gets zero weights for the added channels, so
//    what they hold never reaches a result; any other reader gets the region's tensor cut
//    back to its channels (a Slice), as does a graph output;
//  - a concatenation of such regions (GhostNet's halves) starts a region of its own, whose
//    channels sit where the concatenated padded parts put them, the padding between them;
//    its writers, readers and constants are scattered to those positions and gathered back
//    from them (a Slice per part and a Concat).
// A region is padded only where the layout predicted for the result (nchwc_layout.h) runs more
// convolutions blocked or copies fewer bytes in reorders, at this machine's block and at the
// other one. The weights change shape only; the file stays plain ONNX that any runtime runs,
// and the report records the block it was made on and the prediction at the other. The ONNX job
// checks the result like every rewrite and the latency guard times it against the search's choice
// and the original.
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ort/nchwc_layout.h"

namespace graphsub::ort {

struct ChannelPadding {
  Graph graph;
  std::vector<std::string> regions;  // "440 -> 448 channels: 41 tensors, 6 convolutions"
  NchwcLayout before, after;         // predicted for the graph given and for `graph`
  // The other block size MLAS has on x86-64 (8 where `block` is 16, and 16 where it is 8),
  // the layouts predicted there, and the regions left as they are because they gain at
  // `block` only (a group of 8 merged into 16 runs blocked at 16, but at 8 it ran blocked
  // already and only does twice the arithmetic): the file is written once and run anywhere.
  int other_block = 0;
  NchwcLayout other_before, other_after;
  std::vector<std::string> left_out;
};

// The block size a file padded for `block` must not lose at (0 where there is none).
int other_nchwc_block(int block);

// Unset when no region of `g` gains by padding at `block` (or block is 0); `regions` empty
// (and `graph` the graph given) when those that gain here all lose at the other block size.
std::optional<ChannelPadding> pad_channels_for_nchwc(const Graph& g, int block);

}  // namespace graphsub::ort
