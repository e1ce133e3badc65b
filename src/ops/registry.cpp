#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "core/error.h"
#include "ops/families.h"
#include "ops/op_def.h"

namespace graphsub {
namespace {

struct Registry {
  std::vector<std::unique_ptr<OpDef>> owned;
  std::map<std::string, const OpDef*, std::less<>> by_name;
  std::map<std::string, const OpDef*, std::less<>> by_axiom;
  std::vector<const OpDef*> sorted;

  Registry() {
    std::vector<OpDef> defs;
    register_source_ops(defs);
    register_elementwise_ops(defs);
    register_activation_ops(defs);
    register_index_ops(defs);
    register_linear_ops(defs);
    register_conv_pool_ops(defs);
    register_shape_ops(defs);
    register_reshape_ops(defs);
    register_norm_ops(defs);
    register_opaque_ops(defs);
    register_fused_ops(defs);
    register_attention_ops(defs);
    register_rotary_ops(defs);
    register_ort_gqa_ops(defs);
    for (auto& d : defs) {
      owned.push_back(std::make_unique<OpDef>(std::move(d)));
      const OpDef* p = owned.back().get();
      if (!by_name.emplace(p->name, p).second)
        throw Error(fmt::format("operator '{}' defined twice", p->name));
      if (!p->axiom_name.empty()) by_axiom.emplace(p->axiom_name, p);
      for (auto& out_name : p->axiom_outputs) by_axiom.emplace(out_name, p);
      for (auto& form : p->axiom_forms) {
        by_axiom.emplace(form.name, p);
        for (size_t k = 0; k < p->axiom_outputs.size(); ++k)
          by_axiom.emplace(axiom_form_output(*p, form, k), p);
      }
      sorted.push_back(p);
    }
    std::sort(sorted.begin(), sorted.end(),
              [](const OpDef* a, const OpDef* b) { return a->name < b->name; });
  }
};

const Registry& registry() {
  static const Registry r;
  return r;
}

}  // namespace

const OpDef* find_op(std::string_view name) {
  auto& m = registry().by_name;
  auto it = m.find(name);
  return it == m.end() ? nullptr : it->second;
}

const OpDef& op_def(std::string_view name) {
  const OpDef* d = find_op(name);
  if (!d) throw Error(fmt::format("unknown operator '{}'", name));
  return *d;
}

const OpDef* find_op_by_axiom_name(std::string_view axiom_name) {
  auto& m = registry().by_axiom;
  auto it = m.find(axiom_name);
  return it == m.end() ? nullptr : it->second;
}

const std::vector<const OpDef*>& all_ops() {
  return registry().sorted;
}

std::string axiom_form_output(const OpDef& op, const AxiomForm& form, size_t k) {
  if (k >= op.axiom_outputs.size()) return form.name;
  const std::string& out = op.axiom_outputs[k];
  if (out.starts_with(op.axiom_name)) return form.name + out.substr(op.axiom_name.size());
  return form.name + "_" + out;
}

uint32_t axiom_output_index(const OpDef& op, std::string_view axiom_name) {
  for (size_t i = 0; i < op.axiom_outputs.size(); ++i) {
    if (op.axiom_outputs[i] == axiom_name) return static_cast<uint32_t>(i);
    for (const auto& form : op.axiom_forms)
      if (axiom_form_output(op, form, i) == axiom_name) return static_cast<uint32_t>(i);
  }
  if (!op.axiom_name.empty() && op.axiom_name == axiom_name) return 0;
  for (const auto& form : op.axiom_forms)
    if (form.name == axiom_name) return 0;
  throw Error(fmt::format("'{}' is not an axiom name of operator {}", axiom_name, op.name));
}

void check_arity(const OpDef& op, size_t n) {
  if (static_cast<int>(n) < op.min_inputs ||
      (op.max_inputs >= 0 && static_cast<int>(n) > op.max_inputs)) {
    std::string want = op.max_inputs < 0 ? fmt::format("at least {}", op.min_inputs)
                       : op.min_inputs == op.max_inputs
                           ? fmt::format("{}", op.min_inputs)
                           : fmt::format("{} to {}", op.min_inputs, op.max_inputs);
    throw Error(fmt::format("{} takes {} inputs, got {}", op.name, want, n));
  }
}

Attrs normalize_attrs(const OpDef& op, Attrs attrs) {
  for (const auto& item : attrs.items()) {
    const std::string& name = item.first;  // clang 14 cannot capture structured bindings
    auto it = std::find_if(op.attrs.begin(), op.attrs.end(),
                           [&](const AttrSpec& s) { return s.name == name; });
    if (it == op.attrs.end() && op.cls != OpClass::Opaque)
      throw Error(fmt::format("{} has no attribute '{}'", op.name, name));
  }
  for (const AttrSpec& s : op.attrs) {
    const AttrValue* v = attrs.find(s.name);
    if (!v) {
      if (!s.default_value) throw Error(fmt::format("{} needs attribute '{}'", op.name, s.name));
      attrs.set(s.name, *s.default_value);
      continue;
    }
    AttrKind k = attr_kind(*v);
    if (k == AttrKind::Int && s.kind == AttrKind::Float) {
      attrs.set(s.name, static_cast<double>(std::get<int64_t>(*v)));
      continue;
    }
    if (k != s.kind)
      throw Error(fmt::format("{} attribute '{}' must be {}, got {} {}", op.name, s.name,
                              attr_kind_name(s.kind), attr_kind_name(k), attr_value_str(*v)));
    if (!s.choices.empty()) {
      const auto& str = std::get<std::string>(*v);
      if (std::find(s.choices.begin(), s.choices.end(), str) == s.choices.end())
        throw Error(fmt::format("{} attribute '{}' must be one of {{{}}}, got '{}'", op.name,
                                s.name, fmt::join(s.choices, ","), str));
    }
  }
  return attrs;
}

OpCost op_cost(const OpDef& op, const Attrs& a, std::span<const TensorType> in,
               std::span<const TensorType> out) {
  if (op.cost) return op.cost(a, in, out);
  OpCost c;
  for (auto& t : in) c.bytes += static_cast<double>(t.numel() * dtype_size(t.dtype));
  for (auto& t : out) {
    c.bytes += static_cast<double>(t.numel() * dtype_size(t.dtype));
    c.flops += static_cast<double>(t.numel());
  }
  if (op.cls == OpClass::Source) c = {};
  return c;
}

}  // namespace graphsub
