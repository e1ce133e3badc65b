#include "rules/numeric_check.h"

#include <fmt/format.h>

#include "core/error.h"
#include "exec/reference_executor.h"
#include "rules/axiom_ops.h"
#include "rules/instantiate.h"

namespace graphsub::rules {
namespace {

bool term_uses_standin(const Term& t, const ParamAssignment& params) {
  if (t.kind != Term::Kind::App) return false;
  if (const AxiomOp* op = find_axiom_op(t.name)) {
    if (op->op->standin) return true;
    for (size_t i = 0; i < op->num_params(); ++i) {
      if ((*op->params)[i] != "act") continue;
      const Term& p = *t.args[i];
      AxiomParam v = p.kind == Term::Kind::Var ? params.at(p.name) : param_value(p);
      if (v != AxiomParam{std::string("none")}) return true;
    }
  }
  for (auto& a : t.args)
    if (term_uses_standin(*a, params)) return true;
  return false;
}

// Split points are metadata that only split reads: a side that records no cut where the other
// does only makes later splits ill-typed (and rejected), but two different cuts would make
// them cut in different places.
bool trees_compatible(const SplitTreePtr& a, const SplitTreePtr& b) {
  if (!a || !b) return true;
  return a->cut == b->cut && trees_compatible(a->left, b->left) &&
         trees_compatible(a->right, b->right);
}

}  // namespace

bool types_compatible(const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype || a.layout != b.layout || a.shape != b.shape) return false;
  for (size_t i = 0; i < a.shape.size(); ++i)
    if (!trees_compatible(a.split(i), b.split(i))) return false;
  return true;
}

bool uses_standin(const Rule& r, const ParamAssignment& params) {
  for (auto* side : {&r.source, &r.target})
    for (auto& t : *side)
      if (term_uses_standin(*t, params)) return true;
  return false;
}

InstanceCheck check_instance(const Rule& r, const Instance& in, uint64_t seed,
                             const NumericOptions& opts) {
  InstanceCheck res;
  Graph g;
  Bindings b{.tensors = {}, .params = in.params};
  for (auto& v : r.tensor_vars) b.tensors[v] = {g.add_input(v, in.tensors.at(v)), 0};
  Instantiator inst(g, b);
  size_t n = r.source.size();
  std::vector<TensorRef> src, tgt;
  try {
    for (size_t i = 0; i < n; ++i) src.push_back(inst.build(r.source[i]));
    for (size_t i = 0; i < n; ++i) tgt.push_back(inst.build(r.target[i]));
  } catch (const Error& e) {
    res.ok = false;
    res.output = 0;
    res.failure = fmt::format("does not instantiate: {}", e.what());
    return res;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!types_compatible(g.type(src[i]), g.type(tgt[i]))) {
      res.ok = false;
      res.output = static_cast<int>(i);
      res.failure = fmt::format("types differ: source {} vs target {}", g.type(src[i]).str(),
                                g.type(tgt[i]).str());
      return res;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    g.add_output(fmt::format("source{}", i), src[i]);
    g.add_output(fmt::format("target{}", i), tgt[i]);
  }
  auto f = run_reference(g, random_feeds(g, seed));
  for (size_t i = 0; i < n; ++i) {
    Difference d = compare(f[2 * i], f[2 * i + 1], opts.tolerance);
    if (!d.ok) {
      res.ok = false;
      res.output = static_cast<int>(i);
      res.failure = fmt::format("float values differ: max |diff| {:.3g}", d.max_abs);
      return res;
    }
  }
  // With stand-ins the uint32 run is exact only where both sides apply the same stand-in to
  // the same values; a difference there says nothing about the real functions.
  bool standin = uses_standin(r, in.params);
  auto u = run_reference(g, random_feeds_u32(g, seed));
  for (size_t i = 0; i < n; ++i) {
    if (u[2 * i].data != u[2 * i + 1].data) {
      if (standin) return res;
      size_t k = 0;
      while (u[2 * i].data[k] == u[2 * i + 1].data[k]) ++k;
      res.ok = false;
      res.output = static_cast<int>(i);
      res.failure = fmt::format("exact uint32 values differ at element {}: {} vs {}", k,
                                u[2 * i].data[k], u[2 * i + 1].data[k]);
      return res;
    }
  }
  res.exact_checked = true;
  return res;
}

}  // namespace graphsub::rules
