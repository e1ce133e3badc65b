#include "rules/conditions.h"

#include <fmt/format.h>

#include <optional>

#include "core/error.h"
#include "rules/axiom_ops.h"

namespace graphsub::rules {
namespace {

struct Ctx {
  const std::map<std::string, AxiomParam>& params;
  const std::map<std::string, TensorType>& tensors;
};

// nullopt: a dimension that does not exist.
std::optional<AxiomParam> value_of(const Term& t, const Ctx& c) {
  if (t.kind == Term::Kind::Var) {
    auto it = c.params.find(t.name);
    if (it == c.params.end())
      throw Error(fmt::format("condition uses unbound parameter ?{}", t.name));
    return it->second;
  }
  if (t.kind == Term::Kind::App && t.name == "dim") {
    auto it = c.tensors.find(t.args[0]->name);
    if (it == c.tensors.end()) return std::nullopt;
    int64_t axis = t.args[1]->value;
    if (axis >= it->second.rank()) return std::nullopt;
    const int64_t extent = it->second.shape[static_cast<size_t>(axis)];
    return std::optional<AxiomParam>(std::in_place, std::in_place_type<int64_t>, extent);
  }
  return param_value(t);
}

bool eval(const Term& t, const Ctx& c) {
  const std::string& op = t.name;
  if (op == "and") {
    for (auto& a : t.args)
      if (!eval(*a, c)) return false;
    return true;
  }
  if (op == "or") {
    for (auto& a : t.args)
      if (eval(*a, c)) return true;
    return false;
  }
  if (op == "not") return !eval(*t.args[0], c);
  auto a = value_of(*t.args[0], c), b = value_of(*t.args[1], c);
  if (!a || !b) return false;
  if (op == "=") return *a == *b;
  if (op == "!=") return *a != *b;
  auto* x = std::get_if<int64_t>(&*a);
  auto* y = std::get_if<int64_t>(&*b);
  if (!x || !y)
    throw Error(
        fmt::format("'{}' compares integers, got {} and {}", op, param_str(*a), param_str(*b)));
  if (op == "<") return *x < *y;
  if (op == "<=") return *x <= *y;
  if (op == ">") return *x > *y;
  if (op == ">=") return *x >= *y;
  throw Error(fmt::format("unknown condition operator '{}'", op));
}

bool mentions_dim(const Term& t) {
  if (t.kind == Term::Kind::App && t.name == "dim") return true;
  for (auto& a : t.args)
    if (mentions_dim(*a)) return true;
  return false;
}

}  // namespace

bool conditions_hold(const std::vector<TermPtr>& conditions,
                     const std::map<std::string, AxiomParam>& params,
                     const std::map<std::string, TensorType>& tensors) {
  Ctx c{params, tensors};
  for (auto& t : conditions)
    if (!eval(*t, c)) return false;
  return true;
}

bool conditions_use_shapes(const std::vector<TermPtr>& conditions) {
  for (auto& t : conditions)
    if (mentions_dim(*t)) return true;
  return false;
}

}  // namespace graphsub::rules
