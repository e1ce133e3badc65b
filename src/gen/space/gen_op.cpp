#include "gen/space/gen_op.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "rules/axiom_ops.h"

namespace graphsub::gen {

namespace {

std::string param_text(const AxiomParam& p) {
  if (auto* i = std::get_if<int64_t>(&p)) return std::to_string(*i);
  return std::get<std::string>(p);
}

// Where TASO's generator restricted operands, and why: a conv or pool over a kernel, or a conv
// whose kernel is computed from data, is never a pattern of a real model; enlarge exists only
// to pad weights.
void set_slot_rules(GenOp& op) {
  if (op.name == "conv") op.slots = {SlotRule::Data, SlotRule::Weight};
  if (op.name == "poolavg" || op.name == "poolmax") op.slots[0] = SlotRule::Data;
  if (op.name == "enlarge") op.slots[0] = SlotRule::PoolWeight;
}

// Sizes of the constants, taken from the pool: the channel counts of its images, the column
// counts of its matrices, the shapes of its data tensors.
struct ConstSizes {
  std::set<int64_t> channels, inner;
  std::set<Shape> data_shapes;
};

ConstSizes const_sizes(const std::vector<PoolTensor>& pool) {
  ConstSizes s;
  for (auto& t : pool) {
    if (t.role != Role::Data) continue;
    s.data_shapes.insert(t.shape);
    if (t.shape.size() == 4) s.channels.insert(t.shape[1]);
    if (t.shape.size() == 2) s.inner.insert(t.shape[1]);
  }
  return s;
}

void cross_product(const std::vector<const std::vector<AxiomParam>*>& doms, size_t i,
                   std::vector<AxiomParam>& cur, std::vector<std::vector<AxiomParam>>& out) {
  if (i == doms.size()) {
    out.push_back(cur);
    return;
  }
  for (auto& v : *doms[i]) {
    cur.push_back(v);
    cross_product(doms, i + 1, cur, out);
    cur.pop_back();
  }
}

}  // namespace

std::string GenOp::label() const {
  std::string s = name;
  for (auto& p : params) s += " " + param_text(p);
  for (auto& [k, v] : const_attrs.items())
    if (k != "kernel") s += fmt::format(" {}={}", k, attr_value_str(v));
  return s;
}

bool GenOp::may_be_read_by(const GenOp& reader, int slot) const {
  if (arity > 0) return true;
  for (auto& [name, s] : readers)
    if (name == reader.name && (s < 0 || s == slot)) return true;
  return false;
}

ParamDomains domains_of(const rules::RuleSet& axioms) {
  ParamDomains d;
  for (auto& dom : axioms.domains)
    for (auto& v : dom.values) d[dom.name].push_back(rules::param_value(*v));
  return d;
}

int64_t alt_dim(int64_t d) {
  return d > 1 ? d + 1 : d;
}

Shape alt_shape(const Shape& s, Role role) {
  Shape out = s;
  for (size_t i = 0; i < out.size(); ++i)
    if (!(role == Role::Weight && s.size() == 4 && i >= 2)) out[i] = alt_dim(out[i]);
  return out;
}

namespace {
// The tensor inputs of what `name` denotes in the language: the plain operator `d` or one of
// its longer forms (OpDef::axiom_forms); -1 when `name` is not an operator name of `d` (an
// output name such as split0 is not one).
int language_arity(const OpDef& d, const std::string& name) {
  if (name == d.axiom_name) return d.max_inputs < 0 ? std::max(d.min_inputs, 2) : d.min_inputs;
  for (const AxiomForm& f : d.axiom_forms)
    if (f.name == name) return f.num_tensors;
  return -1;
}
}  // namespace

std::vector<std::string> all_generator_ops() {
  std::vector<std::string> names;
  for (const OpDef* d : all_ops()) {
    // A runtime's fused kernel is generated only when named (the portable set stays
    // portable), and the enumerator applies operators of at most kMaxArity tensor inputs.
    if (d->axiom_name.empty() || !d->runtime.empty()) continue;
    std::vector<std::string> forms{d->axiom_name};
    for (const AxiomForm& f : d->axiom_forms) forms.push_back(f.name);
    for (const std::string& name : forms)
      if (d->cls == OpClass::Source || language_arity(*d, name) <= kMaxArity) names.push_back(name);
  }
  return names;  // sorted by IR name, which is deterministic
}

std::vector<GenOp> make_variants(const std::vector<std::string>& op_names,
                                 const ParamDomains& domains, const std::vector<PoolTensor>& pool) {
  ConstSizes sizes = const_sizes(pool);
  std::vector<GenOp> variants;
  std::set<std::string> seen;
  for (const std::string& name : op_names) {
    if (!seen.insert(name).second) continue;
    const OpDef* def = find_op_by_axiom_name(name);
    if (!def || language_arity(*def, name) < 0)
      throw Error(fmt::format("'{}' is not an operator of the axiom language (known: {})", name,
                              fmt::join(all_generator_ops(), ", ")));
    // A form may read the operator with parameters of its own (permute).
    const std::vector<std::string>* param_names = &def->axiom_params;
    for (const AxiomForm& f : def->axiom_forms)
      if (f.name == name && !f.params.empty()) param_names = &f.params;
    std::vector<const std::vector<AxiomParam>*> doms;
    for (const std::string& p : *param_names) {
      auto it = domains.find(name + "." + p);  // an override for this operator only
      if (it == domains.end()) it = domains.find(p);
      if (it == domains.end() || it->second.empty())
        throw Error(fmt::format("operator '{}': parameter '{}' has no declared domain", name, p));
      doms.push_back(&it->second);
    }
    std::vector<std::vector<AxiomParam>> choices;
    std::vector<AxiomParam> cur;
    cross_product(doms, 0, cur, choices);

    GenOp base;
    base.def = def;
    base.name = name;
    // Split's halves each have a name of their own in the language: both are outputs. An
    // operator whose own name denotes its first output (a skip normalization's norm; its sum
    // is ort_skip_layernorm_sum) is used for that output alone: the enumerator makes every
    // unread output a graph output, so a node whose sum nothing reads would otherwise never
    // equal the normalization of a sum.
    const auto& named = def->axiom_outputs;
    base.num_outputs =
        named.empty() || named[0] == def->axiom_name ? 1 : static_cast<int>(named.size());
    if (def->cls == OpClass::Source) {
      base.arity = 0;
    } else {
      // A variadic operator (concat) is used with two inputs, as in the axioms; a longer form
      // with its optional inputs.
      base.arity = language_arity(*def, name);
      if (base.arity < 1 || base.arity > kMaxArity)
        throw Error(
            fmt::format("operator '{}' takes {} tensor inputs; the generator handles 1 to {}", name,
                        base.arity, kMaxArity));
    }
    set_slot_rules(base);

    for (auto& params : choices) {
      if (base.arity > 0) {
        GenOp v = base;
        v.params = params;
        variants.push_back(std::move(v));
        continue;
      }
      // Constants: the kernel parameter from the domain, the size from the pool.
      auto add_const = [&](Attrs a, Attrs alt) {
        GenOp v = base;
        v.params = params;
        if (def->params_to_attrs) {
          Attrs pa = def->params_to_attrs(params, {});
          for (auto& [k, val] : pa.items()) a.set(k, val);
        }
        try {  // sizes the operator rejects (an even identity kernel) make no variant
          if (def->params_to_attrs) {
            Attrs pa = def->params_to_attrs(params, {});
            for (auto& [k, val] : pa.items()) alt.set(k, val);
          }
          v.const_attrs = normalize_attrs(*def, std::move(a));
          v.alt_const_attrs = normalize_attrs(*def, std::move(alt));
          def->infer(v.const_attrs, {});
          def->infer(v.alt_const_attrs, {});
        } catch (const Error&) {
          return;
        }
        variants.push_back(std::move(v));
      };
      if (name == "cpool" || name == "iconv") {
        base.readers = {{"conv", 1}};
        for (int64_t c : sizes.channels)
          add_const(Attrs{{"channels", c}}, Attrs{{"channels", alt_dim(c)}});
      } else if (name == "imatmul") {
        base.readers = {{"matmul", -1}};
        for (int64_t n : sizes.inner) add_const(Attrs{{"n", n}}, Attrs{{"n", alt_dim(n)}});
      } else if (name == "iewmul") {
        base.readers = {{"ewmul", -1}, {"ewadd", -1}};
        for (const Shape& s : sizes.data_shapes)
          add_const(Attrs{{"shape", s}}, Attrs{{"shape", alt_shape(s, Role::Data)}});
      } else {
        throw Error(fmt::format("constant '{}' has no sizing rule in the generator", name));
      }
    }
  }
  if (variants.size() > 0xFFFF) throw Error("too many operator variants");
  return variants;
}

}  // namespace graphsub::gen
