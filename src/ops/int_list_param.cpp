#include "ops/int_list_param.h"

#include <fmt/format.h>

#include <charconv>

#include "core/error.h"

namespace graphsub {

std::vector<int64_t> param_ints(std::string_view op, const AxiomParam& p) {
  if (const auto* i = std::get_if<int64_t>(&p)) return {*i};
  const std::string& s = std::get<std::string>(p);
  std::vector<int64_t> out;
  size_t start = 0;
  while (true) {
    size_t end = std::min(s.find('_', start), s.size());
    int64_t v = 0;
    auto [q, ec] = std::from_chars(s.data() + start, s.data() + end, v);
    if (ec != std::errc() || q != s.data() + end || end == start)
      throw Error(fmt::format("{}: parameter '{}' is not integers joined by '_'", op, s));
    out.push_back(v);
    if (end == s.size()) break;
    start = end + 1;
  }
  return out;
}

std::optional<AxiomParam> ints_param(std::span<const int64_t> v) {
  if (v.empty()) return std::nullopt;
  if (v.size() == 1) return AxiomParam{v[0]};
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{}", i ? "_" : "", v[i]);
  return AxiomParam{s};
}

}  // namespace graphsub
