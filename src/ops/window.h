#pragma once
// Geometry of a 2-d sliding window (conv and pooling): kernel, stride, dilation and explicit
// pads, plus the named paddings of the axiom language (`same`, `valid`).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/attrs.h"
#include "core/tensor_type.h"

namespace graphsub {

struct Window2d {
  int64_t kh = 1, kw = 1;
  int64_t sh = 1, sw = 1;
  int64_t dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;  // pads: top, left, bottom, right

  // Reads stride, pads and (when `with_dilations`) dilations from the attributes, checking
  // their sizes and ranges; the kernel size comes from the caller (weight shape or attribute).
  static Window2d from_attrs(const char* op, const Attrs& a, int64_t kh, int64_t kw,
                             bool with_dilations);

  // Output height/width for an input NCHW shape; throws naming the shapes when the window
  // does not fit.
  int64_t out_h(const char* op, const Shape& x) const;
  int64_t out_w(const char* op, const Shape& x) const;
};

// Explicit pads [top,left,bottom,right] of a named padding for a kernel: `same` pads (k-1)/2
// on each side (odd kernels only), `valid` pads nothing.
std::vector<int64_t> pads_of_padding(const char* op, const std::string& padding, int64_t kh,
                                     int64_t kw);
// The named padding that explicit pads express for a kernel, if any. For a 1x1 kernel both
// names mean no padding; `same` is returned, so that rules stated for `same` (enlarging a
// kernel) apply to 1x1 convolutions.
std::optional<std::string> padding_of_pads(const std::vector<int64_t>& pads, int64_t kh,
                                           int64_t kw);

}  // namespace graphsub
