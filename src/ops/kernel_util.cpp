#include "ops/kernel_util.h"

namespace graphsub {

Act parse_act(const std::string& s) {
  if (s == "none") return Act::None;
  if (s == "relu") return Act::Relu;
  if (s == "sigmoid") return Act::Sigmoid;
  if (s == "tanh") return Act::Tanh;
  if (s == "relu6") return Act::Relu6;
  if (s == "hardswish") return Act::HardSwish;
  if (s == "silu") return Act::Silu;
  if (s == "gelu") return Act::Gelu;
  throw Error(fmt::format("unknown activation '{}'", s));
}

int64_t norm_axis(const char* op, int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw Error(fmt::format("{}: axis {} out of range for rank {}", op, axis, rank));
  return a;
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1)
      throw Error(
          fmt::format("{}: shapes {} and {} do not broadcast", op, shape_str(a), shape_str(b)));
    out[i] = x == 1 ? y : x;
  }
  return out;
}

OpCost streaming_cost(std::span<const TensorType> in, std::span<const TensorType> out,
                      double per_elem) {
  OpCost c;
  for (auto& t : in) c.bytes += static_cast<double>(t.numel() * dtype_size(t.dtype));
  for (auto& t : out) {
    c.bytes += static_cast<double>(t.numel() * dtype_size(t.dtype));
    c.flops += per_elem * static_cast<double>(t.numel());
  }
  return c;
}

const std::vector<int64_t>& ints_of_size(const char* op, const Attrs& a, const char* name, size_t n,
                                         int64_t min) {
  const auto& v = a.ints(name);
  if (v.size() != n)
    throw Error(
        fmt::format("{}: attribute '{}' must have {} values, got {}", op, name, n, shape_str(v)));
  for (int64_t x : v)
    if (x < min)
      throw Error(fmt::format("{}: attribute '{}' values must be >= {}, got {}", op, name, min,
                              shape_str(v)));
  return v;
}

void require_rank(const char* op, const char* what, const TensorType& t, int64_t rank) {
  if (t.rank() != rank)
    throw Error(
        fmt::format("{}: {} must have rank {}, got {}", op, what, rank, shape_str(t.shape)));
}

OpCost copy_cost(const Attrs&, std::span<const TensorType> in, std::span<const TensorType> out) {
  return streaming_cost(in, out, 0);
}

int64_t param_int(const char* op, std::span<const AxiomParam> p, size_t i) {
  if (i >= p.size() || !std::holds_alternative<int64_t>(p[i]))
    throw Error(fmt::format("{}: axiom parameter {} must be an integer", op, i));
  return std::get<int64_t>(p[i]);
}

const std::string& param_symbol(const char* op, std::span<const AxiomParam> p, size_t i) {
  if (i >= p.size() || !std::holds_alternative<std::string>(p[i]))
    throw Error(fmt::format("{}: axiom parameter {} must be a symbol", op, i));
  return std::get<std::string>(p[i]);
}

Attrs square_kernel_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  int64_t k = param_int("kernel", p, 0);
  return {{"kernel", std::vector<int64_t>{k, k}}};
}

std::optional<std::vector<AxiomParam>> square_kernel_params(const Attrs& a,
                                                            std::span<const TensorType>) {
  auto& k = a.ints("kernel");
  if (k.size() != 2 || k[0] != k[1]) return std::nullopt;
  return std::vector<AxiomParam>{k[0]};
}

AttrSpec required_attr(const char* name, AttrKind kind) {
  return {name, kind, std::nullopt, {}};
}

// Defaults are emplaced rather than moved in from a temporary AttrValue: the move is what
// GCC 12 misreads as a use of uninitialised memory.
AttrSpec int_attr(const char* name, int64_t def) {
  AttrSpec s = required_attr(name, AttrKind::Int);
  s.default_value.emplace(std::in_place_index<0>, def);
  return s;
}
AttrSpec float_attr(const char* name, double def) {
  AttrSpec s = required_attr(name, AttrKind::Float);
  s.default_value.emplace(std::in_place_index<1>, def);
  return s;
}
AttrSpec ints_attr(const char* name, std::vector<int64_t> def) {
  AttrSpec s = required_attr(name, AttrKind::Ints);
  s.default_value.emplace(std::in_place_index<3>, std::move(def));
  return s;
}
const std::vector<std::string>& fused_activations() {
  static const std::vector<std::string> acts{"relu",      "sigmoid", "tanh", "relu6",
                                             "hardswish", "silu",    "gelu"};
  return acts;
}

// hardswish, silu and gelu fuse (oneDNN post-ops) but stay out of the act domain of the axioms:
// each value there multiplies the generator's conv and matmul variants.
bool act_in_axiom_language(const std::string& act) {
  return act != "hardswish" && act != "silu" && act != "gelu";
}

AttrSpec act_attr() {
  AttrSpec s = required_attr("act", AttrKind::String);
  s.default_value.emplace(std::in_place_index<2>, "none");
  s.choices = {"none"};
  s.choices.insert(s.choices.end(), fused_activations().begin(), fused_activations().end());
  return s;
}

}  // namespace graphsub
