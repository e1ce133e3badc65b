#include "check/equivalence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "check/opaque_cut.h"
#include "core/error.h"
#include "exec/reference_executor.h"
#include "exec_onednn/onednn_executor.h"

namespace graphsub {

std::string ResultCheck::scope() const {
  size_t outputs = 0, bounds = 0;
  for (const auto& t : tensors) (t.boundary ? bounds : outputs)++;
  std::string s = fmt::format("{} output{} on {} random input set{}", outputs,
                              outputs == 1 ? "" : "s", runs, runs == 1 ? "" : "s");
  if (opaque_cut)
    s += fmt::format(
        ", and {} tensor{} read by opaque nodes: the regions between {} opaque "
        "node{} were checked with random values at their boundaries, not the "
        "model end to end",
        bounds, bounds == 1 ? "" : "s", opaque_cut, opaque_cut == 1 ? "" : "s");
  return s;
}

double ResultCheck::max_abs() const {
  double m = 0;
  for (const auto& t : tensors) m = std::max(m, t.max_abs);
  return m;
}

double ResultCheck::max_rel() const {
  double m = 0;
  for (const auto& t : tensors) m = std::max(m, t.max_rel);
  return m;
}

std::string ResultCheck::failure() const {
  for (const auto& t : tensors)
    if (!t.ok)
      return fmt::format(
          "{} '{}' differs: max abs difference {:.3g} (scale {:.3g}), max relative {:.3g} "
          "(rtol {:g}, atol {:g})",
          t.boundary ? "cut" : "output", t.name, t.max_abs, t.max_ref, t.max_rel, rtol, atol);
  return "";
}

namespace {

// Inputs and weights without data, random by name: the same values in graphs that share
// the names.
TensorMap<float> feeds_for(const Graph& g, uint64_t seed) {
  TensorMap<float> feeds = random_feeds(g, seed, true);
  for (NodeId w : g.weights())
    if (g.node(w).data) feeds.erase(g.node(w).name);
  return feeds;
}

std::vector<HostTensor<float>> run_graph(const Graph& g, const TensorMap<float>& feeds,
                                         CheckExecutor ex) {
  if (ex == CheckExecutor::Reference) return run_reference(g, feeds);
  OnednnExecutor exec(g);
  return exec.run(feeds);
}

}  // namespace

ResultCheck check_equivalent(const Graph& original, const Graph& optimized,
                             const CheckOptions& opts, Reporter& rep) {
  if (opts.runs < 1) throw Error("result check: the number of runs must be at least 1");
  auto before = opaque_node_names(original), after = opaque_node_names(optimized);
  if (before != after)
    throw Error(
        fmt::format("result check: the optimized graph's opaque nodes ({}) differ from "
                    "the original's ({})",
                    after.size(), before.size()));
  // Without opaque nodes the graphs run as they are (no copies).
  std::vector<std::string> bnames;
  std::optional<Graph> cut_a, cut_b;
  if (!before.empty()) {
    // The tensors both graphs compute. One the optimizer folded into a weight (it was
    // computed from weights alone) is not compared at the cut: the end-to-end runtime check
    // of the written model covers it.
    std::set<std::string> shared;
    auto ba = opaque_boundary(original), bb = opaque_boundary(optimized);
    std::set_intersection(ba.begin(), ba.end(), bb.begin(), bb.end(),
                          std::inserter(shared, shared.end()));
    cut_a = cut_at_opaque(original, &bnames, &shared);
    cut_b = cut_at_opaque(optimized, nullptr, &shared);
  }
  const Graph& a = cut_a ? *cut_a : original;
  const Graph& b = cut_b ? *cut_b : optimized;
  if (a.outputs().size() != b.outputs().size())
    throw Error(
        fmt::format("result check: the optimized graph has {} outputs, the original {} (cuts "
                    "at opaque nodes included)",
                    b.outputs().size(), a.outputs().size()));
  ResultCheck rc;
  rc.runs = opts.runs;
  rc.executor = opts.executor == CheckExecutor::Reference ? "reference" : "onednn";
  rc.rtol = opts.tolerance.rtol;
  rc.atol = opts.tolerance.atol;
  rc.opaque_cut = before.size();
  std::set<std::string> bset(bnames.begin(), bnames.end());
  for (const auto& o : a.outputs())
    rc.tensors.push_back({.name = o.name, .boundary = bset.count(o.name) > 0});
  std::map<std::string, size_t> b_index;
  for (size_t i = 0; i < b.outputs().size(); ++i) b_index[b.outputs()[i].name] = i;
  for (const auto& t : rc.tensors)
    if (!b_index.count(t.name))
      throw Error(fmt::format("result check: '{}' exists in the original only", t.name));

  for (int run = 0; run < opts.runs; ++run) {
    uint64_t s = opts.seed + static_cast<uint64_t>(run) * 7919;
    rep.progress("check", 2.0 * run, 2.0 * opts.runs, "running the original");
    auto ra = run_graph(a, feeds_for(a, s), opts.executor);
    rep.progress("check", 2.0 * run + 1, 2.0 * opts.runs, "running the optimized graph");
    auto rb = run_graph(b, feeds_for(b, s), opts.executor);
    for (size_t i = 0; i < rc.tensors.size(); ++i) {
      TensorCheck& t = rc.tensors[i];
      Difference d = compare(rb[b_index.at(t.name)], ra[i], opts.tolerance);
      t.max_abs = std::max(t.max_abs, d.max_abs);
      t.max_rel = std::max(t.max_rel, d.max_rel);
      t.max_ref = std::max(t.max_ref, d.max_ref);
      t.nonfinite += d.nonfinite;
      t.ok = t.ok && d.ok;
    }
  }
  for (const auto& t : rc.tensors) rc.ok = rc.ok && t.ok;
  return rc;
}

std::vector<std::string> cut_summary_lines(const ResultCheck& rc, const Graph& original) {
  std::map<std::string, std::string> op_of;  // opaque node name -> op type
  for (NodeId id = 0; id < original.num_slots(); ++id) {
    if (!original.alive(id)) continue;
    const Node& n = original.node(id);
    if (!n.is_source() && n.op->cls == OpClass::Opaque) op_of[n.name] = n.attrs.s("op_type");
  }
  struct Group {
    int64_t count = 0;
    double max_abs = 0, max_rel = 0;
    bool ok = true;
  };
  std::map<std::string, Group> groups;
  for (const auto& t : rc.tensors) {
    if (!t.boundary) continue;
    // Cut names are "<opaque node> input <k>" (cut_at_opaque).
    std::string node = t.name.substr(0, t.name.rfind(" input "));
    auto it = op_of.find(node);
    Group& g = groups[it == op_of.end() ? std::string("?") : it->second];
    ++g.count;
    g.max_abs = std::max(g.max_abs, t.max_abs);
    g.max_rel = std::max(g.max_rel, t.max_rel);
    g.ok = g.ok && t.ok;
  }
  std::vector<std::pair<std::string, Group>> sorted(groups.begin(), groups.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.count > b.second.count; });
  std::vector<std::string> lines;
  for (const auto& [op, g] : sorted)
    lines.push_back(fmt::format("{} x {}: max abs diff {:.3g}, max rel diff {:.3g}, {}", g.count,
                                op, g.max_abs, g.max_rel, g.ok ? "ok" : "MISMATCH"));
  return lines;
}

}  // namespace graphsub
