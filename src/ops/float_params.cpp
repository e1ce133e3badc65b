#include "ops/float_params.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "core/error.h"

namespace graphsub {
namespace {

std::string float_str(float v) {
  return fmt::format("{}", v);
}

std::optional<float> parse_float(std::string_view s) {
  float v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::vector<float> param_floats(std::string_view op, std::span<const AxiomParam> p, size_t count) {
  if (p.size() != 1) throw Error(fmt::format("{}: expected one parameter", op));
  if (const auto* i = std::get_if<int64_t>(&p[0])) {
    if (count == 1) return {static_cast<float>(*i)};
    throw Error(fmt::format("{}: parameter {} must spell {} values joined by '_'", op, *i, count));
  }
  const std::string& s = std::get<std::string>(p[0]);
  std::vector<float> out;
  size_t start = 0;
  while (true) {
    size_t end = s.find('_', start);
    auto v = parse_float(std::string_view(s).substr(start, end - start));
    if (!v) throw Error(fmt::format("{}: parameter '{}' is not a number", op, s));
    out.push_back(*v);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (out.size() != count)
    throw Error(
        fmt::format("{}: parameter '{}' spells {} values, not {}", op, s, out.size(), count));
  return out;
}

float param_float(std::string_view op, const AxiomParam& p) {
  return param_floats(op, std::span<const AxiomParam>(&p, 1), 1)[0];
}

std::optional<AxiomParam> floats_param(const std::vector<float>& v) {
  for (float x : v)
    if (std::isnan(x)) return std::nullopt;
  if (v.size() == 1 && std::isfinite(v[0]) && v[0] == std::nearbyint(v[0]) &&
      std::fabs(v[0]) < 1e15f && !(v[0] == 0 && std::signbit(v[0])))
    return AxiomParam{static_cast<int64_t>(v[0])};
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "_" : "") + float_str(v[i]);
  return AxiomParam{s};
}

Attrs one_float_attrs(const char* name, std::span<const AxiomParam> p) {
  return {{name, static_cast<double>(param_floats(name, p, 1)[0])}};
}

std::optional<std::vector<AxiomParam>> one_float_params(const Attrs& a, const char* name) {
  auto p = floats_param({static_cast<float>(a.f(name))});
  if (!p) return std::nullopt;
  return std::vector<AxiomParam>{*p};
}

Attrs epsilon_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  return one_float_attrs("epsilon", p);
}

std::optional<std::vector<AxiomParam>> epsilon_attrs_to_params(const Attrs& a,
                                                               std::span<const TensorType>) {
  return one_float_params(a, "epsilon");
}

std::optional<std::vector<AxiomParam>> last_axis_epsilon_params(const Attrs& a,
                                                                std::span<const TensorType> in) {
  int64_t axis = a.i("axis"), rank = in[0].rank();
  if (axis != -1 && axis != rank - 1) return std::nullopt;
  return epsilon_attrs_to_params(a, in);
}

}  // namespace graphsub
