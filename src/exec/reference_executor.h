#pragma once
// Runs any graph with the operators' reference kernels. Instantiated for float (execution,
// numerical checks) and uint32_t (wrap-around fingerprints).
#include "exec/host_tensor.h"

namespace graphsub {

// feeds: every graph input by name; weights are taken from feeds when present, otherwise
// from their data (float only). Returns the graph outputs in order. Throws Error when a feed
// is missing or has the wrong shape, or the graph holds an opaque operator.
template <class T>
std::vector<HostTensor<T>> run_reference(const Graph& g, const TensorMap<T>& feeds);

}  // namespace graphsub
