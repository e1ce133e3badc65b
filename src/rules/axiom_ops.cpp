#include "rules/axiom_ops.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace graphsub::rules {
namespace {

// The language exposes a fixed-arity view of each operator: optional inputs (bias) are left
// out, except in the longer forms an operator declares (OpDef::axiom_forms), and a
// multi-output operator appears once per output under its OpDef::axiom_outputs name.
std::vector<AxiomOp> build_ops() {
  std::vector<AxiomOp> ops;
  for (const OpDef* d : all_ops()) {
    if (d->axiom_name.empty()) continue;
    AxiomOp a;
    a.op = d;
    a.params = &d->axiom_params;
    // Variadic operators (concat) are binary in the language.
    a.num_tensors =
        static_cast<size_t>(d->max_inputs < 0 ? std::max(d->min_inputs, 2) : d->min_inputs);
    // Each longer form (optional inputs bound) is an operator of its own arity.
    for (const AxiomForm& form : d->axiom_forms) {
      AxiomOp f = a;
      f.num_tensors = static_cast<size_t>(form.num_tensors);
      if (!form.params.empty()) f.params = &form.params;
      f.name = form.name;
      if (d->axiom_outputs.empty()) ops.push_back(f);
      for (uint32_t k = 0; k < d->axiom_outputs.size(); ++k) {
        f.name = axiom_form_output(*d, form, k);
        f.output = k;
        ops.push_back(f);
      }
    }
    if (!d->axiom_outputs.empty()) {
      // A multi-output operator appears once per named output: split0, split1.
      for (uint32_t k = 0; k < d->axiom_outputs.size(); ++k) {
        AxiomOp s = a;
        s.name = d->axiom_outputs[k];
        s.output = k;
        ops.push_back(s);
      }
      continue;
    }
    a.name = d->axiom_name;
    ops.push_back(a);
  }
  std::sort(ops.begin(), ops.end(),
            [](const AxiomOp& x, const AxiomOp& y) { return x.name < y.name; });
  return ops;
}

}  // namespace

const std::vector<AxiomOp>& axiom_ops() {
  static const std::vector<AxiomOp> ops = build_ops();
  return ops;
}

const AxiomOp* find_axiom_op(std::string_view name) {
  auto& ops = axiom_ops();
  auto it = std::lower_bound(ops.begin(), ops.end(), name,
                             [](const AxiomOp& a, std::string_view n) { return a.name < n; });
  return it != ops.end() && it->name == name ? &*it : nullptr;
}

AxiomParam param_value(const Term& t) {
  if (t.kind == Term::Kind::Int) return t.value;
  if (t.kind == Term::Kind::Symbol) return t.name;
  throw Error(fmt::format("'{}' is not a parameter value (an integer or a symbol)",
                          t.kind == Term::Kind::Var ? "?" + t.name : t.name));
}

TermPtr param_term(const AxiomParam& p) {
  if (auto* i = std::get_if<int64_t>(&p)) return Term::integer(*i);
  return Term::symbol(std::get<std::string>(p));
}

std::string param_str(const AxiomParam& p) {
  if (auto* i = std::get_if<int64_t>(&p)) return fmt::format("{}", *i);
  return std::get<std::string>(p);
}

}  // namespace graphsub::rules
