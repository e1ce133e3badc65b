// Nodes of the runtimes' domains (com.microsoft) read into graphsub's fused operators by the
// one table of onnx/format/runtime_operators.h: inputs in order, attributes by name and kind
// from the IR operator's schema, outputs by the table's mapping. A node in a form the fused
// operator does not have (another attribute value, an output graphsub does not compute, shapes
// its kernel does not take) is kept opaque.
#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "onnx/import/import_context.h"

namespace graphsub {
namespace {

// The `activation` of a FusedConv or FusedGemm as graphsub's operator and attributes: its
// parameters are FusedConv's activation_params or FusedGemm's activation_alpha and _beta,
// with ONNX's defaults. One graphsub has no operator for is declined.
std::pair<std::string, Attrs> fused_activation(const NodeAttrs& at) {
  std::string act = at.s("activation", "");
  std::vector<float> params = at.floats("activation_params", {});
  auto param = [&](size_t i, const char* gemm_name, float def) -> double {
    if (at.has(gemm_name)) return at.f(gemm_name, def);
    return i < params.size() ? params[i] : def;
  };
  if (act == "Relu" || act == "Sigmoid" || act == "Tanh") {
    std::string name = act == "Relu" ? "relu" : act == "Sigmoid" ? "sigmoid" : "tanh";
    return {name, {}};
  }
  if (act == "LeakyRelu") return {"leaky_relu", {{"alpha", param(0, "activation_alpha", 0.01f)}}};
  if (act == "HardSigmoid")
    return {"hardsigmoid",
            {{"alpha", param(0, "activation_alpha", 0.2f)},
             {"beta", param(1, "activation_beta", 0.5f)}}};
  if (act == "Clip" && params.size() == 2)
    return {"clip", {{"min", double{params[0]}}, {"max", double{params[1]}}}};
  throw Decline{fmt::format("activation '{}'", act)};
}

// A node that is ONNX operator `r.read_as` followed by its activation.
std::vector<TensorRef> convert_with_activation(ImportContext& c, const onnx::NodeProto& n,
                                               const RuntimeOperator& r) {
  NodeAttrs at(n, ImportContext::label(n));
  if (r.read_as == "Conv" && c.has_input(n, 3)) throw Decline{"a sum input Z is given"};
  auto [act, attrs] = fused_activation(at);
  Converter read = find_converter(std::string(r.read_as));
  std::vector<TensorRef> out = read(c, n);
  return {c.op(n, act, {out.at(0)}, std::move(attrs))};
}

}  // namespace

std::vector<TensorRef> convert_runtime_operator(ImportContext& c, const onnx::NodeProto& n,
                                                const RuntimeOperator& r) {
  if (!r.read_as.empty()) return convert_with_activation(c, n, r);
  const OpDef& op = op_def(r.ir);
  NodeAttrs at(n, ImportContext::label(n));
  for (const auto& [name, value] : r.fixed)
    if (at.i(std::string(name), value) != value)
      throw Decline{
          fmt::format("{}={} (graphsub reads {})", name, at.i(std::string(name), value), value)};
  for (const auto& a : n.attribute()) {
    bool known = std::any_of(op.attrs.begin(), op.attrs.end(),
                             [&](const AttrSpec& s) { return s.name == a.name(); }) ||
                 std::any_of(r.fixed.begin(), r.fixed.end(),
                             [&](const auto& f) { return f.first == a.name(); });
    if (!known) throw Decline{fmt::format("attribute '{}' is not read", a.name())};
  }
  for (int i = 0; i < n.output_size(); ++i)
    if (!n.output(i).empty() && std::count(r.outputs.begin(), r.outputs.end(), i) == 0)
      throw Decline{fmt::format("output {} is used (graphsub computes outputs {})", i,
                                fmt::join(r.outputs, ", "))};

  Attrs attrs;
  for (const AttrSpec& s : op.attrs) {
    if (!at.has(s.name)) continue;  // the schema's default
    switch (s.kind) {
      case AttrKind::Int:
        attrs.set(s.name, at.i(s.name, 0));
        break;
      case AttrKind::Float:
        attrs.set(s.name, static_cast<double>(at.f(s.name, 0)));
        break;
      case AttrKind::String:
        attrs.set(s.name, at.s(s.name, ""));
        break;
      case AttrKind::Ints:
        attrs.set(s.name, at.ints(s.name, {}));
        break;
    }
  }

  // Inputs in order; the trailing absent ones are left out, and an absent one before a given
  // one is zeros where the table allows it (it has the shape of the next given one). Constant
  // integer inputs become their attributes, wherever they stand.
  auto int_input = [&](int i) {
    auto it = std::find_if(r.int_inputs.begin(), r.int_inputs.end(),
                           [&](const IntInput& p) { return p.at == i; });
    return it == r.int_inputs.end() ? nullptr : &*it;
  };
  int last = n.input_size() - 1;
  while (last >= 0 && (!c.has_input(n, last) || int_input(last))) --last;
  std::vector<TensorRef> in;
  for (int i = 0; i < n.input_size(); ++i) {
    if (!r.ranked_inputs.empty() && i >= op.min_inputs) {
      if (!c.has_input(n, i)) continue;
      auto it = std::find_if(r.ranked_inputs.begin(), r.ranked_inputs.end(),
                             [&](const RankedInput& p) { return p.at == i; });
      if (it == r.ranked_inputs.end()) throw Decline{fmt::format("input {} is given", i)};
      TensorRef t = c.data(n, i);
      if (static_cast<int>(c.shape(t).size()) != it->rank)
        throw Decline{fmt::format("input {} has rank {}, not {}", i, c.shape(t).size(), it->rank)};
      in.push_back(t);
      continue;
    }
    if (const IntInput* held = int_input(i)) {
      std::optional<std::vector<int64_t>> v = c.const_ints(n, i);
      if (!v) throw Decline{fmt::format("input {} ({}) is not a constant", i, held->name)};
      attrs.set(std::string(held->name), std::move(*v));
      continue;
    }
    if (i > last) continue;
    if (c.has_input(n, i)) {
      in.push_back(c.data(n, i));
      continue;
    }
    if (std::count(r.zero_when_absent.begin(), r.zero_when_absent.end(), i) == 0)
      throw Decline{fmt::format("input {} is absent before a given one", i)};
    int next = i + 1;
    while (!c.has_input(n, next)) ++next;
    Shape s = c.shape(c.data(n, next));
    in.push_back(c.float_weight(c.unique_name(n.name() + "_zeros"), s,
                                std::vector<float>(static_cast<size_t>(numel(s)), 0.0f)));
  }
  if (static_cast<int>(in.size()) < op.min_inputs)
    throw Decline{fmt::format("{} inputs given, {} needed", in.size(), op.min_inputs)};

  std::vector<TensorRef> ir_out;
  try {
    ir_out = c.op_multi(n, r.ir, std::move(in), std::move(attrs));
  } catch (const Error& e) {
    throw Decline{e.what()};
  }
  std::vector<TensorRef> outs(static_cast<size_t>(n.output_size()), ir_out[0]);
  for (size_t k = 0; k < r.outputs.size() && k < ir_out.size(); ++k)
    if (r.outputs[k] < n.output_size()) outs[static_cast<size_t>(r.outputs[k])] = ir_out[k];
  return outs;
}

}  // namespace graphsub
