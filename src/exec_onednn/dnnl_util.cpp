#include "exec_onednn/dnnl_util.h"

#include <fmt/format.h>

#include <map>

#include "core/error.h"

namespace graphsub::onednn {

Dims dims_of(const Shape& s) {
  if (s.empty()) return {1};
  if (s.size() > DNNL_MAX_NDIMS)
    throw Error(fmt::format("tensor of rank {} exceeds oneDNN's limit of {} dimensions", s.size(),
                            DNNL_MAX_NDIMS));
  return Dims(s.begin(), s.end());
}

memory::desc plain_desc(const Shape& s) {
  Dims d = dims_of(s);
  Dims strides(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(d[i], 1);
  return memory::desc(d, memory::data_type::f32, strides);
}

memory::desc any_desc(const Dims& d) {
  return memory::desc(d, memory::data_type::f32, Tag::any);
}

Dims pad_front(const Shape& s, size_t rank) {
  Dims d(rank, 1);
  for (size_t i = 0; i < s.size(); ++i) d[rank - s.size() + i] = s[i];
  return d;
}

bool is_plain(const memory::desc& md) {
  return md == plain_desc(md.dims());
}

void append_act(dnnl::post_ops& ops, const std::string& act) {
  using dnnl::algorithm;
  struct Post {
    algorithm alg;
    float alpha, beta;
  };
  static const std::map<std::string, Post> posts{
      {"relu", {algorithm::eltwise_relu, 0.f, 0.f}},
      {"sigmoid", {algorithm::eltwise_logistic, 0.f, 0.f}},
      {"tanh", {algorithm::eltwise_tanh, 0.f, 0.f}},
      {"relu6", {algorithm::eltwise_clip_v2, 0.f, 6.f}},        // min(max(x, 0), 6)
      {"hardswish", {algorithm::eltwise_hardswish, 0.f, 0.f}},  // ONNX's HardSwish
      {"silu", {algorithm::eltwise_swish, 1.f, 0.f}},           // x * sigmoid(alpha x)
      {"gelu", {algorithm::eltwise_gelu_erf, 0.f, 0.f}},
  };
  if (act == "none") return;
  auto it = posts.find(act);
  if (it == posts.end()) throw Error(fmt::format("unknown activation '{}'", act));
  ops.append_eltwise(1.f, it->second.alg, it->second.alpha, it->second.beta);
}

std::string desc_str(const memory::desc& md) {
  if (is_plain(md)) return "plain";
  const auto& b = md.data.format_desc.blocking;
  // Outer strides order plus inner blocks, e.g. "blocked 16c" — enough to tell layouts apart.
  std::string inner;
  for (int i = 0; i < b.inner_nblks; ++i)
    inner += fmt::format("{}{}", b.inner_blks[i], static_cast<char>('a' + b.inner_idxs[i]));
  return inner.empty() ? "strided" : "blocked " + inner;
}

}  // namespace graphsub::onednn
