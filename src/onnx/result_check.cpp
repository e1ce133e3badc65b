#include "onnx/result_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/error.h"
#include "exec/reference_executor.h"
#include "exec_onednn/onednn_executor.h"
#include "ir/builder.h"
#include "ir/hash.h"

namespace graphsub {

static std::string opaque_key(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (n.name.empty())
    throw Error(
        fmt::format("result check: {} has no name to match it across graphs", g.describe(id)));
  return n.name;
}

Graph cut_at_opaque(const Graph& g, std::vector<std::string>* boundary_names) {
  Graph cut;
  std::map<TensorRef, TensorRef> map;
  std::set<TensorRef> boundary_seen;
  std::vector<std::pair<std::string, TensorRef>> boundary;
  for (NodeId id : g.topo_order()) {
    const Node& n = g.node(id);
    if (n.is_input()) {
      map[{id, 0}] = {cut.add_input(n.name, n.outputs[0]), 0};
    } else if (n.is_weight()) {
      map[{id, 0}] = {cut.add_weight(n.name, n.outputs[0], n.data), 0};
    } else if (n.op->cls == OpClass::Opaque) {
      std::string key = opaque_key(g, id);
      for (uint32_t i = 0; i < n.outputs.size(); ++i)
        map[{id, i}] = {cut.add_input(fmt::format("{} output {}", key, i), n.outputs[i]), 0};
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        TensorRef r = n.inputs[k];
        if (g.node(r.node).is_source() || !boundary_seen.insert(r).second) continue;
        boundary.emplace_back(fmt::format("{} input {}", key, k), map.at(r));
      }
    } else if (n.is_source()) {
      map[{id, 0}] = {cut.add(*n.op, {}, n.attrs, n.name), 0};
    } else {
      std::vector<TensorRef> ins;
      for (auto r : n.inputs) ins.push_back(map.at(r));
      NodeId c = cut.add(*n.op, std::move(ins), n.attrs, n.name);
      for (uint32_t i = 0; i < n.outputs.size(); ++i) map[{id, i}] = {c, i};
    }
  }
  for (const auto& o : g.outputs()) cut.add_output(o.name, map.at(o.ref));
  for (const auto& [name, ref] : boundary) {
    cut.add_output(name, ref);
    if (boundary_names) boundary_names->push_back(name);
  }
  cut.remove_dead();
  return cut;
}

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

// Weights known by shape only get random values seeded by their name (the same in both).
static void add_dataless_weights(const Graph& g, uint64_t seed, TensorMap<float>& feeds) {
  for (NodeId id : g.weights()) {
    const Node& n = g.node(id);
    if (n.data) continue;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull ^ hash_bytes(n.name.data(), n.name.size());
    feeds[n.name] = {n.outputs[0].shape, random_values(n.outputs[0].numel(), s)};
  }
}

static std::vector<HostTensor<float>> run_graph(const Graph& g, const TensorMap<float>& feeds,
                                                CheckExecutor ex) {
  if (ex == CheckExecutor::Reference) return run_reference(g, feeds);
  OnednnExecutor exec(g);
  return exec.run(feeds);
}

ResultCheck check_results(const Graph& original, const Graph& optimized, int runs, uint64_t seed,
                          double rtol, double atol, CheckExecutor executor, Reporter& rep) {
  if (runs < 1) throw Error("result check: the number of runs must be at least 1");
  auto opaque_names = [](const Graph& g) {
    std::set<std::string> s;
    for (NodeId id = 0; id < g.num_slots(); ++id)
      if (g.alive(id) && g.node(id).op->cls == OpClass::Opaque) s.insert(opaque_key(g, id));
    return s;
  };
  auto before = opaque_names(original), after = opaque_names(optimized);
  if (before != after)
    throw Error(
        fmt::format("result check: the optimized graph's opaque nodes ({}) differ from "
                    "the original's ({})",
                    after.size(), before.size()));
  std::vector<std::string> bnames_a, bnames_b;
  Graph a = cut_at_opaque(original, &bnames_a);
  Graph b = cut_at_opaque(optimized, &bnames_b);
  if (a.outputs().size() != b.outputs().size())
    throw Error(
        fmt::format("result check: the graphs have {} and {} outputs (at opaque cuts "
                    "included)",
                    a.outputs().size(), b.outputs().size()));
  ResultCheck rc;
  rc.runs = runs;
  rc.executor = executor == CheckExecutor::Reference ? "reference" : "onednn";
  rc.rtol = rtol;
  rc.atol = atol;
  rc.opaque_cut = before.size();
  std::set<std::string> bset(bnames_a.begin(), bnames_a.end());
  for (const auto& o : a.outputs())
    rc.tensors.push_back({.name = o.name, .boundary = bset.count(o.name) > 0});
  std::map<std::string, size_t> b_index;
  for (size_t i = 0; i < b.outputs().size(); ++i) b_index[b.outputs()[i].name] = i;
  for (const auto& t : rc.tensors)
    if (!b_index.count(t.name))
      throw Error(fmt::format("result check: '{}' exists in the original only", t.name));

  for (int run = 0; run < runs; ++run) {
    uint64_t s = seed + static_cast<uint64_t>(run) * 7919;
    auto feeds = random_feeds(a, s);
    add_dataless_weights(a, s, feeds);
    rep.progress("check", 2.0 * run, 2.0 * runs, "running the original");
    auto ra = run_graph(a, feeds, executor);
    rep.progress("check", 2.0 * run + 1, 2.0 * runs, "running the optimized model");
    auto feeds_b = random_feeds(b, s);
    add_dataless_weights(b, s, feeds_b);
    for (const auto& [name, t] : feeds)
      if (feeds_b.count(name)) feeds_b[name] = t;
    auto rb = run_graph(b, feeds_b, executor);
    for (size_t i = 0; i < rc.tensors.size(); ++i) {
      TensorCheck& t = rc.tensors[i];
      const auto& ref = ra[i];
      const auto& got = rb[b_index.at(t.name)];
      if (ref.shape != got.shape) {
        t.ok = false;
        t.max_abs = t.max_rel = INFINITY;
        continue;
      }
      double scale = 0;
      for (float v : ref.data)
        if (std::isfinite(v)) scale = std::max(scale, static_cast<double>(std::fabs(v)));
      t.max_ref = std::max(t.max_ref, scale);
      double tol_abs = atol * std::max(1.0, scale);
      for (size_t k = 0; k < ref.data.size(); ++k) {
        double x = got.data[k], y = ref.data[k];
        if (!std::isfinite(y)) ++t.nonfinite;
        // Non-finite values agree only with the same value (NaN with NaN, +inf with +inf).
        if (!std::isfinite(x) || !std::isfinite(y)) {
          bool same = (std::isnan(x) && std::isnan(y)) || x == y;
          if (!same) {
            t.ok = false;
            t.max_abs = INFINITY;
          }
          continue;
        }
        double diff = std::fabs(x - y);
        double mag = std::max(std::fabs(x), std::fabs(y));
        t.max_abs = std::max(t.max_abs, diff);
        if (mag > 0) t.max_rel = std::max(t.max_rel, diff / mag);
        if (!(diff <= tol_abs + rtol * std::fabs(y))) t.ok = false;
      }
    }
  }
  for (const auto& t : rc.tensors) rc.ok = rc.ok && t.ok;
  return rc;
}

}  // namespace graphsub

namespace graphsub {

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
