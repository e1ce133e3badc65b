#include "exec_onednn/onednn_executor.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

#include "core/error.h"
#include "exec_onednn/lower_ops.h"
#include "exec_onednn/lowering.h"
#include "core/error.h"
#include "ir/parallel.h"

namespace graphsub {

using onednn::memory;

namespace {

// A graph input (or run-time weight) filled from the feeds on every run.
struct RuntimeSource {
  std::string name;
  Shape shape;
  memory mem;
  WeightData fallback;  // weights fed at run time: used when the feed is absent
};

struct OutputSlot {
  Shape shape;
  memory mem;
};

// Sets the OpenMP thread count of the calling thread (which oneDNN reads when it creates and
// runs primitives) for one scope; 0 leaves it alone.
class ThreadScope {
 public:
  explicit ThreadScope(int threads) : prev_(omp_get_max_threads()), set_(threads > 0) {
    if (set_) omp_set_num_threads(threads);
  }
  ~ThreadScope() {
    if (set_) omp_set_num_threads(prev_);
  }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

 private:
  int prev_;
  bool set_;
};

bool has_empty_tensor(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  for (auto r : n.inputs)
    if (g.type(r).numel() == 0) return true;
  for (auto& t : n.outputs)
    if (t.numel() == 0) return true;
  return false;
}

}  // namespace

struct OnednnExecutor::Impl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  OnednnOptions opts;
  std::vector<RuntimeSource> sources;
  std::set<std::string> baked_weights;
  std::vector<onednn::Step> steps;
  std::vector<memory> buffers;  // owns what steps and views point into
  std::vector<OutputSlot> outputs;
  std::vector<NodePlan> plan;
  size_t num_slots = 0;

  void compile(const Graph& g);
  std::string lower_node(onednn::Lowering& L, NodeId id);
  void load_feeds(const TensorMap<float>& feeds);
  std::vector<HostTensor<float>> collect() const;
};

std::string OnednnExecutor::Impl::lower_node(onednn::Lowering& L, NodeId id) {
  const Graph& g = L.graph();
  const Node& n = g.node(id);
  onednn::LowerFn fn = onednn::find_lowering(n.op->name);
  L.begin(id);
  if (!fn || has_empty_tensor(g, id)) return onednn::lower_reference(L);
  std::string why;
  try {
    return fn(L);
  } catch (const dnnl::error& e) {
    why = e.what();
  } catch (const onednn::NotLowered& e) {
    why = e.why;
  }
  L.rollback();
  return onednn::lower_reference(L) + " (oneDNN: " + why + ")";
}

void OnednnExecutor::Impl::compile(const Graph& g) {
  num_slots = g.num_slots();
  onednn::Lowering L(g, eng, strm, opts.fold_constants);
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    for (auto& t : n.outputs)
      if (t.rank() > DNNL_MAX_NDIMS)
        throw Error(fmt::format("{}: output {} has rank {}, beyond oneDNN's {} dimensions",
                                g.describe(id), t.str(), t.rank(), DNNL_MAX_NDIMS));
    if (n.is_input() || n.is_weight()) {
      const TensorType& t = n.outputs.at(0);
      if (n.data && static_cast<int64_t>(n.data->size()) != t.numel())
        throw Error(fmt::format("weight '{}' of shape {} has {} values", n.name, shape_str(t.shape),
                                n.data->size()));
      if (n.is_weight() && n.data && !opts.feed_weights) {
        L.define_constant_source(id, *n.data);
        baked_weights.insert(n.name);
      } else {
        sources.push_back(
            {n.name, t.shape, L.define_runtime_source(id), n.is_weight() ? n.data : nullptr});
      }
      continue;
    }
    if (n.op->cls == OpClass::Opaque)
      throw Error(
          fmt::format("{}: opaque operator, its semantics are unknown; the oneDNN executor "
                      "cannot run it",
                      g.describe(id)));
    std::string how;
    try {
      how = lower_node(L, id);
      L.end();
    } catch (const dnnl::error& e) {
      throw Error(fmt::format("{}: oneDNN failed: {}", g.describe(id), e.what()));
    }
    plan.push_back({id, n.op->name, L.folding() ? "folded: " + how : how});
  }
  try {
    for (auto& o : g.outputs())
      outputs.push_back({g.type(o.ref).shape, L.plain_for_output(o.ref, o.ref.node)});
  } catch (const dnnl::error& e) {
    throw Error(fmt::format("oneDNN failed converting the graph outputs: {}", e.what()));
  }
  steps = std::move(L.steps());
  buffers = std::move(L.buffers());
}

void OnednnExecutor::Impl::load_feeds(const TensorMap<float>& feeds) {
  if (!opts.feed_weights)
    for (auto& [name, t] : feeds)
      if (baked_weights.count(name))
        throw Error(
            fmt::format("feed '{}' names a weight whose data was compiled in; build the "
                        "executor with feed_weights to feed weights",
                        name));
  for (auto& s : sources) {
    auto it = feeds.find(s.name);
    const std::vector<float>* data = nullptr;
    if (it != feeds.end()) {
      if (it->second.shape != s.shape ||
          it->second.data.size() != static_cast<size_t>(numel(s.shape)))
        throw Error(fmt::format("feed '{}' has shape {} ({} values), graph expects {}", s.name,
                                shape_str(it->second.shape), it->second.data.size(),
                                shape_str(s.shape)));
      data = &it->second.data;
    } else if (s.fallback) {
      data = s.fallback.get();
    } else {
      throw Error(fmt::format("no value for '{}' of shape {}", s.name, shape_str(s.shape)));
    }
    if (!data->empty())
      std::memcpy(s.mem.get_data_handle(), data->data(), data->size() * sizeof(float));
  }
}

std::vector<HostTensor<float>> OnednnExecutor::Impl::collect() const {
  std::vector<HostTensor<float>> result;
  for (auto& o : outputs) {
    HostTensor<float> t{o.shape, std::vector<float>(static_cast<size_t>(numel(o.shape)))};
    if (!t.data.empty())
      std::memcpy(t.data.data(), o.mem.get_data_handle(), t.data.size() * sizeof(float));
    result.push_back(std::move(t));
  }
  return result;
}

int max_executor_threads() {
  return 4 * hardware_threads();
}

OnednnExecutor::OnednnExecutor(const Graph& g, OnednnOptions opts)
    : impl_(std::make_unique<Impl>()) {
  if (opts.threads < 0) throw Error(fmt::format("threads must be >= 0, got {}", opts.threads));
  if (opts.threads > max_executor_threads())
    throw Error(fmt::format("threads: {} is more than the limit of {} (4 per hardware thread)",
                            opts.threads, max_executor_threads()));
  impl_->opts = opts;
  ThreadScope threads(opts.threads);
  impl_->compile(g);
}

OnednnExecutor::~OnednnExecutor() = default;
OnednnExecutor::OnednnExecutor(OnednnExecutor&&) noexcept = default;
OnednnExecutor& OnednnExecutor::operator=(OnednnExecutor&&) noexcept = default;

std::vector<HostTensor<float>> OnednnExecutor::run(const TensorMap<float>& feeds) {
  ThreadScope threads(impl_->opts.threads);
  impl_->load_feeds(feeds);
  for (auto& s : impl_->steps) {
    if (s.prim) {
      s.prim.execute(impl_->strm, s.args);
    } else {
      impl_->strm.wait();
      s.host();
    }
  }
  impl_->strm.wait();
  return impl_->collect();
}

std::vector<HostTensor<float>> OnednnExecutor::run(const TensorMap<float>& feeds,
                                                   std::vector<NodeTime>& times) {
  using clock = std::chrono::steady_clock;
  ThreadScope threads(impl_->opts.threads);
  impl_->load_feeds(feeds);
  times.clear();
  std::vector<int64_t> slot(impl_->num_slots, -1);  // node -> index in times
  for (auto& s : impl_->steps) {
    auto t0 = clock::now();
    if (s.prim) {
      s.prim.execute(impl_->strm, s.args);
      impl_->strm.wait();
    } else {
      s.host();
    }
    double sec = std::chrono::duration<double>(clock::now() - t0).count();
    if (slot[s.owner] < 0) {
      slot[s.owner] = static_cast<int64_t>(times.size());
      times.push_back({s.owner, 0, 0});
    }
    NodeTime& t = times[static_cast<size_t>(slot[s.owner])];
    t.seconds += sec;
    if (s.conversion) t.conversion_seconds += sec;
  }
  return impl_->collect();
}

const std::vector<NodePlan>& OnednnExecutor::plan() const {
  return impl_->plan;
}

size_t OnednnExecutor::num_run_steps() const {
  return impl_->steps.size();
}

bool onednn_slices_are_contiguous(const Shape& shape, int64_t axis) {
  int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0 || axis < -rank || axis >= rank) return false;
  if (axis < 0) axis += rank;
  for (int64_t d = 0; d < axis; ++d)
    if (shape[static_cast<size_t>(d)] != 1) return false;
  return true;
}

std::string onednn_cpu_isa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic:
      return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops:
      return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "generic";
  }
}

}  // namespace graphsub
