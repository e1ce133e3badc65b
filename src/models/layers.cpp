#include "models/layers.h"

#include <fmt/format.h>

#include "core/error.h"

namespace graphsub::models {

static std::vector<int64_t> pads_for(Pad pad, int64_t kh, int64_t kw) {
  if (pad == Pad::Valid) return {0, 0, 0, 0};
  if (kh % 2 == 0 || kw % 2 == 0)
    throw Error(fmt::format("SAME padding needs odd kernels, got {}x{}", kh, kw));
  return {(kh - 1) / 2, (kw - 1) / 2, (kh - 1) / 2, (kw - 1) / 2};
}

std::string Layers::fresh_name(const std::string& kind) {
  return fmt::format("{}.{}{}", scope_, kind, counter_++);
}

TensorRef Layers::weight(const std::string& kind, Shape shape) {
  return b_.weight(fresh_name(kind), std::move(shape));
}

TensorRef Layers::conv(TensorRef x, const Conv& c) {
  int64_t in = shape(x).at(1);
  if (c.groups < 1 || in % c.groups != 0)
    throw Error(fmt::format("conv: {} input channels do not split into {} groups", in, c.groups));
  auto w = weight("conv", {c.out, in / c.groups, c.kh, c.kw});
  return b_.op("conv", {x, w},
               {{"stride", std::vector<int64_t>{c.stride, c.stride}},
                {"pads", pads_for(c.pad, c.kh, c.kw)},
                {"act", c.act}});
}

static Attrs pool_attrs(int64_t k, int64_t stride, Pad pad) {
  return {{"kernel", std::vector<int64_t>{k, k}},
          {"stride", std::vector<int64_t>{stride, stride}},
          {"pads", pads_for(pad, k, k)}};
}

TensorRef Layers::poolmax(TensorRef x, int64_t k, int64_t stride, Pad pad) {
  return b_.op("poolmax", {x}, pool_attrs(k, stride, pad));
}

TensorRef Layers::poolavg(TensorRef x, int64_t k, int64_t stride, Pad pad) {
  return b_.op("poolavg", {x}, pool_attrs(k, stride, pad));
}

TensorRef Layers::dense(TensorRef x, int64_t n, const std::string& act) {
  auto w = weight("fc", {shape(x).back(), n});
  return b_.matmul(x, w, act);
}

}  // namespace graphsub::models
