#pragma once
// Float attributes as parameters of the axiom language, spelled exactly: the shortest decimal
// that reads back as the same float, several values joined by '_' (hardsigmoid 0.2_0.5), an
// integral single value as an integer (pow 2). Shared by every operator with float attributes.
#include <optional>
#include <span>
#include <vector>

#include "ops/op_def.h"

namespace graphsub {

// The `count` attribute values the single parameter in `p` spells; throws Error naming `op`.
std::vector<float> param_floats(std::string_view op, std::span<const AxiomParam> p, size_t count);
// The one float value parameter `p` spells.
float param_float(std::string_view op, const AxiomParam& p);
// The parameter spelling the given values; nullopt for NaN (no exact spelling is needed).
std::optional<AxiomParam> floats_param(const std::vector<float>& v);

// One float attribute `name` as an operator's one parameter, both ways.
Attrs one_float_attrs(const char* name, std::span<const AxiomParam> p);
std::optional<std::vector<AxiomParam>> one_float_params(const Attrs& a, const char* name);

// The `epsilon` attribute of a normalization as its one parameter (eps), both ways.
Attrs epsilon_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType> in);
std::optional<std::vector<AxiomParam>> epsilon_attrs_to_params(const Attrs& a,
                                                               std::span<const TensorType> in);
// The same for a normalization with an `axis` attribute, which the language has over the last
// axis only: nullopt for another axis.
std::optional<std::vector<AxiomParam>> last_axis_epsilon_params(const Attrs& a,
                                                                std::span<const TensorType> in);

}  // namespace graphsub
