#include "opt/transforms/rule_transform.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "opt/match/scratch_pool.h"
#include "opt/transforms/target_memo.h"
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

size_t RuleTransform::find(const GraphIndex& ix, std::vector<Match>& out) const {
  return pattern_.find(ix, out);
}

Outcome RuleTransform::apply(const GraphIndex& ix, const Match& m, Builder& b) const {
  const Graph& g = ix.graph();
  auto known = memo_.find(g, m.vars, m.params);
  if (known && known->failure) return *known->failure;
  ScratchLease<std::vector<TensorRef>> targets;
  // A recorded target adds the same nodes (operators, attributes, output types, in order) as
  // instantiating the terms again, without the term engine.
  if (!known || !known->nodes || !b.replay(*known->nodes, m.vars, *targets)) {
    Graph& h = b.graph();
    const NodeId first = b.first();
    auto built = type_checked([&] { return rules::instantiate(h, rule_.target, bindings(m)); });
    if (!built) {
      if (!known) memo_.add(g, m.vars, m.params, {built.failure(), std::nullopt});
      return built.failure();
    }
    *targets = std::move(*built);
    if (!known)
      memo_.add(g, m.vars, m.params, {std::nullopt, Template::record(h, first, m.vars, *targets)});
  }
  for (size_t i = 0; i < targets->size(); ++i) b.replace(m.outputs[i], (*targets)[i]);
  return Applied{};
}

std::string RuleTransform::where(const GraphIndex& ix, const Match& m) const {
  const Graph& g = ix.graph();
  std::vector<std::string> at;
  for (NodeId n : m.internal)
    if (!g.node(n).is_source()) at.push_back(node_label(g, n));
  return fmt::format("{}", fmt::join(at, ", "));
}

}  // namespace graphsub::opt
