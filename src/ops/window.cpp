#include "ops/window.h"

#include <fmt/format.h>

#include "core/error.h"
#include "ops/kernel_util.h"

namespace graphsub {

Window2d Window2d::from_attrs(const char* op, const Attrs& a, int64_t kh, int64_t kw,
                              bool with_dilations) {
  Window2d w;
  w.kh = kh;
  w.kw = kw;
  auto& s = ints_of_size(op, a, "stride", 2, 1);
  w.sh = s[0];
  w.sw = s[1];
  auto& p = ints_of_size(op, a, "pads", 4, 0);
  w.pt = p[0];
  w.pl = p[1];
  w.pb = p[2];
  w.pr = p[3];
  if (with_dilations) {
    auto& d = ints_of_size(op, a, "dilations", 2, 1);
    w.dh = d[0];
    w.dw = d[1];
  }
  return w;
}

static int64_t window_out(const char* op, const Shape& x, int64_t in, int64_t k, int64_t s,
                          int64_t d, int64_t p0, int64_t p1) {
  if (k < 1)
    throw Error(
        fmt::format("{}: kernel size {} for input {}; it must be at least 1", op, k, shape_str(x)));
  // Checked: the attributes may come from a file or a rule with any values.
  auto reach = checked_mul(d, k - 1);
  auto padded_opt = checked_add(in, p0);
  if (padded_opt) padded_opt = checked_add(*padded_opt, p1);
  if (!reach || !padded_opt)
    throw Error(
        fmt::format("{}: window (kernel {}, dilation {}, pads {},{}) on input {} is "
                    "out of range",
                    op, k, d, p0, p1, shape_str(x)));
  int64_t span = *reach + 1, padded = *padded_opt;
  if (padded < span)
    throw Error(
        fmt::format("{}: window of size {} (kernel {}, dilation {}) does not fit input {} "
                    "with pads {},{}",
                    op, span, k, d, shape_str(x), p0, p1));
  return (padded - span) / s + 1;
}

int64_t Window2d::out_h(const char* op, const Shape& x) const {
  return window_out(op, x, x[2], kh, sh, dh, pt, pb);
}
int64_t Window2d::out_w(const char* op, const Shape& x) const {
  return window_out(op, x, x[3], kw, sw, dw, pl, pr);
}

std::vector<int64_t> pads_of_padding(const char* op, const std::string& padding, int64_t kh,
                                     int64_t kw) {
  if (padding == "valid") return {0, 0, 0, 0};
  if (padding == "same") {
    if (kh % 2 == 0 || kw % 2 == 0)
      throw Error(fmt::format("{}: padding 'same' needs an odd kernel, got {}x{}", op, kh, kw));
    int64_t ph = (kh - 1) / 2, pw = (kw - 1) / 2;
    return {ph, pw, ph, pw};
  }
  throw Error(fmt::format("{}: unknown padding '{}' (expected same or valid)", op, padding));
}

std::optional<std::string> padding_of_pads(const std::vector<int64_t>& pads, int64_t kh,
                                           int64_t kw) {
  if (kh % 2 == 1 && kw % 2 == 1) {
    int64_t ph = (kh - 1) / 2, pw = (kw - 1) / 2;
    if (pads == std::vector<int64_t>{ph, pw, ph, pw}) return "same";
  }
  if (pads == std::vector<int64_t>{0, 0, 0, 0}) return "valid";
  return std::nullopt;
}

}  // namespace graphsub
