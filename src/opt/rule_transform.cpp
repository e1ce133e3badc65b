#include "opt/rule_transform.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "core/error.h"
#include "opt/application_price.h"
#include "opt/rewrite.h"
#include "opt/scratch_pool.h"
#include "opt/structural_rules.h"
#include "opt/target_memo.h"
#include "rules/axiom_ops.h"
#include "rules/instantiate.h"

namespace graphsub::opt {

namespace {

// Parameter variables a term uses.
void param_vars_of(const rules::TermPtr& t, std::vector<std::string>& out) {
  if (t->kind != rules::Term::Kind::App) return;
  const rules::AxiomOp* op = rules::find_axiom_op(t->name);
  size_t np = op ? op->num_params() : 0;
  for (size_t i = 0; i < t->args.size(); ++i) {
    const auto& a = t->args[i];
    if (i < np && a->kind == rules::Term::Kind::Var) out.push_back(a->name);
    param_vars_of(a, out);
  }
}

}  // namespace

RuleTransform::RuleTransform(rules::Rule rule) : rule_(std::move(rule)), pattern_(rule_) {
  std::vector<std::string> target_params;
  for (auto& t : rule_.target) param_vars_of(t, target_params);
  std::vector<std::string> source_params;
  for (auto& t : rule_.source) param_vars_of(t, source_params);
  for (auto& p : target_params)
    if (std::find(source_params.begin(), source_params.end(), p) == source_params.end())
      throw Error(
          fmt::format("rule '{}': target parameter ?{} is not bound by the source", rule_.name, p));
}

std::string RuleTransform::origin() const {
  return rule_.loc.file.empty() ? "rule" : fmt::format("{}:{}", rule_.loc.file, rule_.loc.line);
}

rules::Bindings RuleTransform::bindings(const Match& m) const {
  rules::Bindings b;
  for (size_t v = 0; v < m.vars.size(); ++v)
    b.tensors.emplace(pattern_.tensor_vars()[v], m.vars[v]);
  for (size_t p = 0; p < m.params.size(); ++p)
    if (m.params[p]) b.params.emplace(pattern_.param_vars()[p], *m.params[p]);
  return b;
}

void RuleTransform::apply(const GraphIndex& ix, const EmitFn& emit) const {
  run(ix, nullptr, emit);
}

void RuleTransform::apply_priced(const GraphIndex& ix, const Pricing& pricing,
                                 const EmitFn& emit) const {
  run(ix, &pricing, emit);
}

void RuleTransform::run(const GraphIndex& ix, const Pricing* pricing, const EmitFn& emit) const {
  if (!pattern_.possible(ix)) return;  // before leasing buffers: most rules stop here
  const Graph& g = ix.graph();
  // Buffers kept across calls (per thread): matches, pricing's work vectors, replacements.
  struct Buffers {
    std::vector<Match> matches;
    PriceBuffers price;
    std::vector<Replacement> reps;
    std::vector<TensorRef> targets;
  };
  ScratchLease<Buffers> lease;
  auto& matches = lease->matches;
  PriceBuffers& buf = lease->price;
  std::vector<Replacement>& price_reps = lease->reps;
  const size_t num_matches = pattern_.find(ix, matches);
  ScratchGraph scratch;  // the parent plus the application being priced
  for (size_t k = 0; k < num_matches; ++k) {
    const Match& m = matches[k];
    auto known = memo_.find(g, m.vars, m.params);
    if (known && known->fails) continue;
    if (pricing) {
      std::optional<double> price;
      if (known && known->nodes) {  // priced from the recorded nodes: no graph is edited
        price = price_template(ix, *known->nodes, m.vars, m.outputs, m.internal, *pricing, buf);
      } else {
        NodeId first = 0;
        Graph& sg = scratch.begin(g, first);
        std::vector<TensorRef>& targets = lease->targets;
        bool built = false;
        try {
          targets = rules::instantiate(sg, rule_.target, bindings(m));
          built = true;
        } catch (const Error&) {  // the target does not type-check here: not an application
          memo_.add(g, m.vars, m.params, {true, std::nullopt});
        }
        if (built && !known)
          memo_.add(g, m.vars, m.params, {false, Template::record(sg, first, m.vars, targets)});
        if (built) {
          price_reps.clear();
          for (size_t i = 0; i < targets.size(); ++i)
            price_reps.push_back({m.outputs[i], targets[i]});
          price = price_application(ix, sg, first, price_reps, m.internal, *pricing, buf);
        }
        scratch.clear_from(first);
      }
      if (!price || !pricing->admit(*price)) continue;
    }
    Rewrite rw(ix);
    std::vector<Replacement> reps;
    try {
      // A recorded target adds the same nodes (operators, attributes, output types, in order)
      // as instantiating the terms again, without the term engine.
      std::vector<TensorRef> targets;
      if (known && known->nodes && !known->nodes->adds_sources)
        known->nodes->replay(rw.graph(), m.vars, targets);
      else
        targets = rules::instantiate(rw.graph(), rule_.target, bindings(m));
      for (size_t i = 0; i < targets.size(); ++i) reps.push_back({m.outputs[i], targets[i]});
    } catch (const Error&) {  // the target does not type-check here: not an application
      if (!known) memo_.add(g, m.vars, m.params, {true, std::nullopt});
      continue;
    }
    try {
      auto out = std::move(rw).finish(reps);
      if (!out) continue;
      std::vector<std::string> at;
      for (NodeId n : m.internal)
        if (!g.node(n).is_source()) at.push_back(node_label(g, n));
      emit({std::move(*out), fmt::format("{}", fmt::join(at, ", ")), k, pricing != nullptr});
    } catch (const Error&) {  // a replacement the graph refuses: not an application
    }
  }
}

}  // namespace graphsub::opt
