#include "driver/opset_held_back.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "opt/match/graph_index.h"
#include "opt/transforms/rule_transform.h"
#include "rules/axiom_ops.h"

namespace graphsub::driver {
namespace {

// The newest-opset operator a rule's target introduces beyond `opset`, or null.
const OpDef* newer_operator(const rules::Rule& r, int64_t opset) {
  const OpDef* found = nullptr;
  std::vector<const rules::Term*> todo;
  for (const auto& t : r.target) todo.push_back(t.get());
  while (!todo.empty()) {
    const rules::Term* t = todo.back();
    todo.pop_back();
    if (t->kind != rules::Term::Kind::App) continue;
    const rules::AxiomOp* op = rules::find_axiom_op(t->name);
    if (op && op->op->onnx_since > opset) found = op->op;
    for (const auto& a : t->args) todo.push_back(a.get());
  }
  return found;
}

}  // namespace

std::vector<HeldBackOperator> held_back_by_opset(const Graph& g, const opt::RuleLibrary& lib,
                                                 int64_t opset) {
  if (opset <= 0) return {};
  std::vector<std::pair<const opt::Transform*, const OpDef*>> rules;
  for (const opt::Transform* t : lib.transforms()) {
    const auto* rt = dynamic_cast<const opt::RuleTransform*>(t);
    if (const OpDef* op = rt ? newer_operator(rt->rule(), opset) : nullptr)
      rules.push_back({t, op});
  }
  if (rules.empty()) return {};  // the usual case: no graph index to build
  std::map<std::string, std::pair<int64_t, std::set<TensorRef>>> places;
  opt::GraphIndex ix(g);
  std::vector<opt::Match> matches;
  for (auto [t, op] : rules) {
    size_t n = t->find(ix, matches);
    for (size_t i = 0; i < n; ++i) {
      if (!opt::build_application(*t, ix, matches[i])) continue;
      auto& [since, tensors] = places[op->name];
      since = op->onnx_since;
      tensors.insert(matches[i].outputs.begin(), matches[i].outputs.end());
    }
  }
  std::vector<HeldBackOperator> out;
  for (auto& [name, p] : places) out.push_back({name, p.first, p.second.size()});
  return out;
}

std::string describe_held_back(const std::vector<HeldBackOperator>& held, int64_t opset) {
  std::string line;
  int64_t since = 0;
  for (const auto& h : held) {
    line +=
        fmt::format("{}{} place{} could use the operator {}, which ONNX has from opset {}",
                    line.empty() ? "" : "; ", h.places, h.places == 1 ? "" : "s", h.op, h.since);
    since = std::max(since, h.since);
  }
  if (line.empty()) return line;
  return fmt::format("{}; the file is written at opset {}: --opset {} lets the search consider it",
                     line, opset, since);
}

}  // namespace graphsub::driver
