#include "exec/reference_executor.h"

#include <fmt/format.h>

#include <type_traits>

#include "core/error.h"

namespace graphsub {

template <class T>
static Kernel<T> kernel_of(const OpDef& op) {
  if constexpr (std::is_same_v<T, float>)
    return op.kernel_f32;
  else
    return op.kernel_u32;
}

template <class T>
std::vector<HostTensor<T>> run_reference(const Graph& g, const TensorMap<T>& feeds) {
  std::vector<std::vector<std::vector<T>>> values(g.num_slots());
  auto order = g.topo_order();
  // Free each buffer after its last reader to keep peak memory near the live set.
  std::vector<size_t> last_use(g.num_slots(), 0);
  for (size_t i = 0; i < order.size(); ++i)
    for (auto r : g.node(order[i]).inputs) last_use[r.node] = i;
  std::vector<bool> is_output(g.num_slots(), false);
  for (auto& o : g.outputs()) is_output[o.ref.node] = true;

  for (size_t step = 0; step < order.size(); ++step) {
    NodeId id = order[step];
    const Node& n = g.node(id);
    auto& outs = values[id];
    if (n.is_input() || n.is_weight()) {
      const TensorType& t = n.outputs[0];
      auto it = feeds.find(n.name);
      if (it != feeds.end()) {
        if (it->second.shape != t.shape)
          throw Error(fmt::format("feed '{}' has shape {}, graph expects {}", n.name,
                                  shape_str(it->second.shape), shape_str(t.shape)));
        outs.push_back(it->second.data);
      } else if (n.is_weight() && n.data && std::is_same_v<T, float>) {
        outs.emplace_back(n.data->begin(), n.data->end());
      } else {
        throw Error(fmt::format("no value for {} '{}' of shape {}", n.op->name, n.name,
                                shape_str(t.shape)));
      }
      continue;
    }
    Kernel<T> k = kernel_of<T>(*n.op);
    if (!k)
      throw Error(
          fmt::format("{}: no reference kernel (operator without semantics)", g.describe(id)));
    std::vector<TensorType> in_types;
    std::vector<const T*> in_ptrs;
    for (auto r : n.inputs) {
      in_types.push_back(g.type(r));
      in_ptrs.push_back(values[r.node].at(r.output).data());
    }
    outs.resize(n.outputs.size());
    std::vector<T*> out_ptrs;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      outs[i].assign(static_cast<size_t>(n.outputs[i].numel()), T{});
      out_ptrs.push_back(outs[i].data());
    }
    KernelIO<T> io{n.attrs, in_types, n.outputs, in_ptrs, out_ptrs};
    k(io);
    for (auto r : n.inputs)
      if (last_use[r.node] == step && !is_output[r.node]) values[r.node].clear();
  }
  std::vector<HostTensor<T>> result;
  for (auto& o : g.outputs())
    result.push_back({g.type(o.ref).shape, values[o.ref.node].at(o.ref.output)});
  return result;
}

template std::vector<HostTensor<float>> run_reference(const Graph&, const TensorMap<float>&);
template std::vector<HostTensor<uint32_t>> run_reference(const Graph&, const TensorMap<uint32_t>&);

}  // namespace graphsub
