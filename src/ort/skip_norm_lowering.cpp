#include "ort/skip_norm_lowering.h"

#include <fmt/format.h>

#include <string_view>

#include "core/error.h"
#include "opt/match/graph_index.h"

namespace graphsub::ort {
namespace {

// The fused operator ONNX Runtime forms from an Add and this normalization ("" : none).
std::string_view fused_op_of(std::string_view norm) {
  if (norm == "layernorm") return "ort_skip_layernorm";
  if (norm == "rms_norm" || norm == "ort_simplified_layernorm")
    return "ort_skip_simplified_layernorm";
  return "";
}

bool is_add(const Node& n) {
  return n.op->name == "ewadd" || n.op->name == "add";
}

// A site's configuration: its two nodes' (operator, attributes, types, constant inputs).
std::string site_key(const Graph& g, const SkipNormSite& s, const std::vector<uint8_t>& constant) {
  return opt::config_key(opt::op_config(g, s.add, constant)) + " -> " +
         opt::config_key(opt::op_config(g, s.norm, constant));
}

SkipNormPrices price_site(opt::CostModel& cost, const Graph& g, const SkipNormSite& site,
                          const std::vector<uint8_t>& constant) {
  const Node& add = g.node(site.add);
  const Node& norm = g.node(site.norm);
  const OpDef* fused = find_op(fused_op_of(norm.op->name));
  if (!fused) return {};
  // The fused node reads x, skip, then the normalization's own vectors (gamma, beta).
  std::vector<const TensorType*> in = {&g.type(add.inputs[0]), &g.type(add.inputs[1])};
  std::vector<uint8_t> in_constant = {constant[add.inputs[0].node], constant[add.inputs[1].node]};
  for (size_t i = 1; i < norm.inputs.size() && in.size() < static_cast<size_t>(fused->max_inputs);
       ++i) {
    in.push_back(&g.type(norm.inputs[i]));
    in_constant.push_back(constant[norm.inputs[i].node]);
  }
  Attrs attrs;
  if (norm.attrs.has("epsilon")) attrs.set("epsilon", norm.attrs.f("epsilon"));
  std::vector<TensorType> types;
  for (const TensorType* t : in) types.push_back(*t);
  std::vector<TensorType> out;
  try {
    attrs = normalize_attrs(*fused, attrs);
    out = fused->infer(attrs, types);
  } catch (const Error&) {
    return {};  // a form the fused operator does not take (a broadcast gamma, say)
  }
  SkipNormPrices p;
  p.unfused_us = cost.node_cost(g, site.add, constant) + cost.node_cost(g, site.norm, constant);
  p.fused_us = cost.node_cost(*fused, attrs, in, in_constant, out);
  return p;
}

}  // namespace

std::vector<SkipNormSite> skip_norm_sites(const Graph& g) {
  std::vector<SkipNormSite> sites;
  for (NodeId id : g.topo_order()) {
    const Node& norm = g.node(id);
    if (norm.is_source() || fused_op_of(norm.op->name).empty() || norm.inputs.empty()) continue;
    int64_t rank = static_cast<int64_t>(g.type(norm.inputs[0]).shape.size());
    int64_t axis = norm.attrs.has("axis") ? norm.attrs.i("axis") : -1;
    if (rank < 2 || (axis != -1 && axis != rank - 1)) continue;  // fused: the last axis only
    TensorRef x = norm.inputs[0];
    const Node& add = g.node(x.node);
    if (add.is_source() || !is_add(add) || add.inputs.size() != 2) continue;
    if (g.type(add.inputs[0]).shape != g.type(add.inputs[1]).shape) continue;
    sites.push_back({x.node, id});
  }
  return sites;
}

void SkipNormLowering::price(opt::CostModel& cost, const Graph& g) {
  std::vector<SkipNormSite> sites = skip_norm_sites(g);
  if (sites.empty()) return;
  std::vector<uint8_t> constant = opt::constant_nodes(g);
  for (const SkipNormSite& s : sites) {
    std::string key = site_key(g, s, constant);
    if (!prices_.count(key)) prices_[key] = price_site(cost, g, s, constant);
  }
}

std::vector<NodeId> SkipNormLowering::adds(const Graph& g) const {
  std::vector<NodeId> out;
  std::vector<SkipNormSite> sites = skip_norm_sites(g);
  if (sites.empty() || prices_.empty()) return out;
  std::vector<uint8_t> constant = opt::constant_nodes(g);
  for (const SkipNormSite& s : sites) {
    auto it = prices_.find(site_key(g, s, constant));
    if (it != prices_.end() && it->second.slower()) out.push_back(s.add);
  }
  return out;
}

std::string SkipNormLowering::describe(const Graph& g) const {
  std::vector<SkipNormSite> sites = skip_norm_sites(g);
  if (sites.empty() || prices_.empty()) return "";
  std::vector<uint8_t> constant = opt::constant_nodes(g);
  size_t n = 0;
  double fused = 0, unfused = 0;
  for (const SkipNormSite& s : sites) {
    auto it = prices_.find(site_key(g, s, constant));
    if (it == prices_.end() || !it->second.slower()) continue;
    ++n;
    fused += it->second.fused_us;
    unfused += it->second.unfused_us;
  }
  if (n == 0) return "";
  return fmt::format(
      "{} of {} Add(s) feeding a normalization written as Sum: ONNX Runtime would fuse them "
      "into skip normalizations priced {:.0f} us here, against {:.0f} us for the nodes they "
      "replace",
      n, sites.size(), fused, unfused);
}

}  // namespace graphsub::ort
