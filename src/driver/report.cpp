#include "driver/report.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace graphsub::driver {

namespace {

using Json = nlohmann::ordered_json;

Json counts_json(const auto& before, const auto& after) {
  Json out = Json::object();
  std::map<std::string, std::pair<int64_t, int64_t>> both;
  for (const auto& [op, n] : before) both[op].first = static_cast<int64_t>(n);
  for (const auto& [op, n] : after) both[op].second = static_cast<int64_t>(n);
  for (const auto& [op, ba] : both) out[op] = {{"before", ba.first}, {"after", ba.second}};
  return out;
}

template <class Map>
int64_t total(const Map& m) {
  int64_t t = 0;
  for (const auto& [k, n] : m) t += static_cast<int64_t>(n);
  return t;
}

Json search_json(const opt::SearchResult& s) {
  return {
      {"expanded", s.expanded},     {"generated", s.generated},      {"kept", s.kept},
      {"duplicates", s.duplicates}, {"dropped", s.dropped},          {"peak_queue", s.peak_queue},
      {"stopped_by", s.stopped_by}, {"applications", s.steps.size()}};
}

Json rules_json(const opt::OptimizeResult& r) {
  Json applied = Json::object();
  for (const auto& [rule, n] : r.rules_applied) applied[rule] = n;
  Json steps = Json::array();
  for (const auto& s : r.search.steps) steps.push_back({{"rule", s.rule}, {"where", s.where}});
  return {{"loaded", r.rules_loaded}, {"applied", applied}, {"steps", steps}};
}

Json check_json(const ResultCheck& c) {
  Json tensors = Json::array();
  for (const auto& t : c.tensors)
    tensors.push_back({{"name", t.name},
                       {"boundary", t.boundary},
                       {"max_abs_diff", t.max_abs},
                       {"max_rel_diff", t.max_rel},
                       {"max_abs_value", t.max_ref},
                       {"nonfinite", t.nonfinite},
                       {"ok", t.ok}});
  return {{"ok", c.ok},
          {"runs", c.runs},
          {"executor", c.executor},
          {"rtol", c.rtol},
          {"atol", c.atol},
          {"max_abs_diff", c.max_abs()},
          {"max_rel_diff", c.max_rel()},
          {"opaque_cut", c.opaque_cut},
          {"scope", c.scope()},
          {"outputs", tensors}};
}

Json layout_json(const ort::NchwcLayout& l) {
  return {{"blocked_convs", l.blocked_convs},
          {"plain_convs", l.plain_convs},
          {"reorder_inputs", l.reorder_inputs},
          {"reorder_outputs", l.reorder_outputs},
          {"reorder_mb", l.reorder_mb}};
}

Json timings_json(const Report& r) {
  Json t = {{"search_s", r.result.search.seconds},
            {"search_cpu_s", r.result.search.cpu_seconds},
            {"peak_rss_mib", r.result.peak_rss_mib}};
  for (const auto& [stage, s] : r.seconds) t[stage + "_s"] = s;
  if (r.model_checked) t["check_s"] = r.result.check_seconds;
  if (r.guard) {
    const auto& g = *r.guard;
    Json cands = Json::array();
    for (const auto& c : g.candidates)
      cands.push_back(
          {{"predicted_ms", c.predicted_ms}, {"measured_ms", c.median_ms}, {"runs", c.ms.size()}});
    t["guard"] = {{"runtime", g.runtime},
                  {"runs", g.original.ms.size()},
                  {"original_ms", g.original_ms},
                  {"original_predicted_ms", g.original.predicted_ms},
                  {"first_ms", g.original.median_ms},
                  {"control_ms", g.control.median_ms},
                  {"candidates", cands},
                  {"noise", g.noise},
                  {"written", g.write_input  ? "input"
                              : g.chosen < 0 ? "original"
                                             : "optimized"},
                  {"cleaned_ms", g.cleaned ? g.cleaned->median_ms : 0.0},
                  {"cleaned_runs", g.cleaned ? g.cleaned->ms.size() : 0},
                  {"written_candidate", g.chosen},
                  {"within_noise", g.within_noise},
                  {"speedup", g.speedup()},
                  {"verdict", g.verdict}};
    if (const auto& o = g.second) {
      Json cands = Json::array();
      for (size_t k = 0; k < o->candidates.size(); ++k)
        cands.push_back(
            {{"candidate", o->index[k]},
             {"median_ms", o->candidates[k].median_ms},
             {"speedup",
              o->candidates[k].median_ms > 0 ? o->original_ms / o->candidates[k].median_ms : 0.0}});
      t["guard"]["openvino"] = {{"runtime", o->runtime},
                                {"original_ms", o->original.median_ms},
                                {"control_ms", o->control.median_ms},
                                {"noise", o->noise},
                                {"candidates", cands},
                                {"refused", o->refused},
                                {"retimed", o->retimed},
                                {"kept", o->kept},
                                {"verdict", o->verdict}};
    }
    if (const auto& c = g.confirmation)
      t["guard"]["confirmation"] = {{"rewrite", c->challenger},
                                    {"first_speedup", c->first_speedup},
                                    {"first_noise", c->first_noise},
                                    {"original_ms", c->original.median_ms},
                                    {"control_ms", c->control.median_ms},
                                    {"rewrite_ms", c->rewrite.median_ms},
                                    {"speedup", c->speedup},
                                    {"noise", c->noise},
                                    {"confirmed", c->confirmed}};
  }
  if (const auto& l = r.layout) {
    Json lt = {{"reorder_us_per_mb", l->reorder_us_per_mb},
               {"search_predicted_ms", l->search_ms},
               {"padded_timed", l->timed},
               {"written_padded", l->written_padded},
               {"verdict", l->verdict}};
    if (l->timed) lt["padded_predicted_ms"] = l->padded_ms;
    if (l->written) lt["written"] = layout_json(*l->written);
    t["layout"] = lt;
  }
  if (r.measured) {
    auto run = [](const opt::RunTime& x) {
      return Json{{"wall_ms", x.wall_ms}, {"cpu_ms", x.cpu_ms}};
    };
    t["measured"] = {{"runs", r.measured_runs},
                     {"threads", r.measured_threads},
                     {"executor", "onednn"},
                     {"before", run(r.measured->a)},
                     {"after", run(r.measured->b)}};
  }
  return t;
}

}  // namespace

std::string report_json(const Report& r) {
  Json j;
  j["job"] = r.job;
  Json options = Json::object();
  for (const auto& [k, v] : r.options) options[k] = v;
  j["options"] = options;
  if (r.opset) {
    Json opaque = Json::array();
    for (const auto& o : r.opaque)
      opaque.push_back(
          {{"name", o.name}, {"op_type", o.op_type}, {"domain", o.domain}, {"reason", o.reason}});
    j["import"] = {{"opset", *r.opset},
                   {"removed_identity_dropout", r.removed},
                   {"removed_no_ops", r.no_ops},
                   {"opaque", opaque},
                   {"notes", r.import_notes}};
    j["onnx_ops"] = {{"before", total(r.onnx_ops_before)},
                     {"after", total(r.onnx_ops_after)},
                     {"by_op", counts_json(r.onnx_ops_before, r.onnx_ops_after)}};
  }
  j["graph_ops"] = {{"before", total(r.ops_before)},
                    {"after", total(r.ops_after)},
                    {"by_op", counts_json(r.ops_before, r.ops_after)}};
  const auto& res = r.result;
  j["cost"] = {{"model", res.cost_model},
               {"assumptions", res.assumptions},
               {"predicted_before_us", res.initial_cost},
               {"predicted_after_us", res.final_cost},
               {"predicted_speedup", res.final_cost > 0 ? res.initial_cost / res.final_cost : 1.0}};
  j["rules"] = rules_json(res);
  j["search"] = search_json(res.search);
  j["weights_precomputed"] = res.folded;
  j["views"] = {{"chains_canonicalized", res.views_canonicalized},
                {"reshapes_joined", res.reshapes_joined}};
  if (r.check) {
    j["check"] = check_json(*r.check);
    if (!r.symbolic_checks.empty()) {
      Json at = Json::object();
      for (const auto& [where, c] : r.symbolic_checks) at[where] = check_json(c);
      j["check"]["at_symbolic_values"] = at;
    }
  } else if (r.model_checked) {
    j["check"] = check_json(res.check);
  } else {
    j["check"] = nullptr;  // skipped (--check 0 / --no-check), or not needed:
    if (!r.check_not_needed.empty()) j["check_not_needed"] = r.check_not_needed;
  }
  // --ort-contrib-ops: the runtime's operators the written file holds beyond the input's.
  if (auto o = r.options.find("ort_contrib_ops"); o != r.options.end() && o->second == "true") {
    Json written = Json::object();
    for (const auto& [op, n] : runtime_operators_added(r)) written[op] = n;
    Json checks = Json::array();
    for (const auto& c : r.runtime_checks) {
      Json outputs = Json::array();
      for (const auto& o : c.outputs)
        outputs.push_back({{"name", o.name},
                           {"max_abs_diff", o.max_abs_diff},
                           {"max_abs_value", o.max_abs_value},
                           {"ok", o.match}});
      Json check = {{"ok", c.match}, {"dim", c.dim}, {"outputs", outputs}};
      if (!c.dims.empty()) check["dims"] = c.dims;  // the imported values, by name
      if (!c.reference_error.empty()) {             // nothing was compared there
        check["ok"] = nullptr;
        check["input_cannot_run"] = c.reference_error;
      }
      checks.push_back(std::move(check));
    }
    j["ort_contrib_ops"] = {{"written", written}, {"checks_in_onnxruntime", checks}};
  }
  if (const auto& l = r.layout) {
    j["layout"] = {
        {"runtime", "onnxruntime"},
        {"block", l->block},
        {"original", layout_json(l->original)},
        {"search", layout_json(l->search)},
        {"padded_regions", l->regions},
        {"padded", l->padded ? layout_json(*l->padded) : Json(nullptr)},
        {"other_block", l->other_block},
        {"padded_at_other_block", l->other_padded ? layout_json(*l->other_padded) : Json(nullptr)},
        {"left_out_block_dependent", l->left_out}};
  }
  j["timings"] = timings_json(r);
  return j.dump(2) + "\n";
}

void write_report_json(const Report& r, const std::string& path) {
  std::string text = report_json(r);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  out << text;
  out.close();
  if (!out) throw Error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
}

std::map<std::string, int64_t> runtime_operators_added(const Report& r) {
  std::map<std::string, int64_t> added;
  for (const auto& [op, n] : r.onnx_ops_after) {
    if (!op.starts_with("com.microsoft:")) continue;
    auto before = r.onnx_ops_before.find(op);
    int64_t had = before == r.onnx_ops_before.end() ? 0 : before->second;
    if (n > had) added[op] = n - had;
  }
  return added;
}

}  // namespace graphsub::driver
