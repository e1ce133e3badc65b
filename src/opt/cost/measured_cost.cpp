#include "opt/cost/measured_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "exec_onednn/onednn_executor.h"
#include "ir/builder.h"
#include "opt/cost/analytic_cost.h"
#include "opt/cost/runtime.h"
#include "opt/match/graph_index.h"

namespace graphsub::opt {

// Convolutions write blocked layouts (nChw8c, nChw16c). A channel concat of plain inputs is
// no work at all (its producers write into the concatenated buffer); blocked ones are copied.
bool reads_conv_layouts(const OpDef& op) {
  return op.name == "poolavg" || op.name == "poolmax" || op.name == "global_avgpool" ||
         op.name == "concat";
}

std::pair<Graph, NodeId> measurement_graph(const OpConfig& c, bool conv_context) {
  Graph g;
  std::vector<TensorRef> ins;
  for (size_t i = 0; i < c.in.size(); ++i) {
    if (c.in_constant[i]) {
      auto data = std::make_shared<const std::vector<float>>(
          random_values(c.in[i].numel(), 1000 + i, -1.f, 1.f));
      ins.push_back({g.add_weight(fmt::format("w{}", i), c.in[i], data), 0});
      continue;
    }
    TensorRef x{g.add_input(fmt::format("x{}", i), c.in[i]), 0};
    const Shape& s = c.in[i].shape;
    if (conv_context && reads_conv_layouts(*c.op) && s.size() == 4 && c.in[i].dtype == DType::F32) {
      TensorType wt{.dtype = DType::F32, .shape = {s[1], s[1], 1, 1}};
      auto data = std::make_shared<const std::vector<float>>(
          random_values(wt.numel(), 2000 + i, -1.f, 1.f));
      TensorRef w{g.add_weight(fmt::format("k{}", i), wt, data), 0};
      x = {g.add("conv", {x, w}), 0};
    }
    ins.push_back(x);
  }
  NodeId id = g.add(*c.op, ins, c.attrs);
  for (uint32_t k = 0; k < g.node(id).outputs.size(); ++k)
    g.add_output(fmt::format("y{}", k), {id, k});
  return {std::move(g), id};
}

namespace {

// Bumped whenever the executor changes what an operator costs, so that tables measured
// before are measured again. 2: zero-copy splits and in-place concats. 3: pools and concats
// timed on operands in the layout convolutions write. 4: concats of one shared layout copied by
// reorders.
constexpr int kExecutorVersion = 4;

double megabytes(const OpConfig& c) {
  return op_cost(*c.op, c.attrs, c.in, c.out).bytes / 1e6;
}

}  // namespace

MeasuredCostModel::MeasuredCostModel(std::string cache_dir, MachineProfile machine,
                                     Reporter& reporter)
    : machine_(std::move(machine)), reporter_(reporter) {
  path_ = (std::filesystem::path(cache_dir) /
           fmt::format("op-costs-{}.json", cpu_tag(machine_.threads)))
              .string();
  std::ifstream in(path_);
  if (!in) return;
  try {
    auto j = nlohmann::json::parse(in);
    if (j.value("executor", 1) != kExecutorVersion) {
      reporter_.info(
          fmt::format("cost table {} was measured with an older executor; measuring again", path_));
      dirty_ = true;  // rewritten on save, even if nothing new is measured
      return;
    }
    for (auto& [k, v] : j.at("entries").items()) table_[k] = v.get<double>();
    if (j.contains("calibration")) {
      auto& c = j["calibration"];
      calib_.fitted = true;
      calib_.scale = c.at("scale").get<double>();
      calib_.per_op_us = c.at("per_op_us").get<double>();
      calib_.per_mb_us = c.at("per_mb_us").get<double>();
      calib_.per_graph_us = c.at("per_graph_us").get<double>();
      calib_.samples = c.at("samples").get<size_t>();
      calib_.fit_error = c.at("fit_error").get<double>();
    }
  } catch (const std::exception& e) {
    table_.clear();
    calib_ = {};
    reporter_.warn(fmt::format("ignoring unreadable cost table {}: {}", path_, e.what()));
  }
}

MeasuredCostModel::~MeasuredCostModel() {
  try {
    save();
  } catch (const std::exception& e) {
    reporter_.warn(fmt::format("could not save the cost table {}: {}", path_, e.what()));
  }
}

std::string MeasuredCostModel::assumptions() const {
  return fmt::format("oneDNN timings on {}; table {} ({} configurations); {}", machine_.str(),
                     path_, table_.size(), calib_.str());
}

void MeasuredCostModel::set_calibration(const Calibration& c) {
  calib_ = c;
  dirty_ = true;
}

void MeasuredCostModel::save() {
  if (!dirty_) return;
  nlohmann::json j;
  j["cpu"] = machine_.cpu;
  j["isa"] = machine_.isa;
  j["threads"] = machine_.threads;
  j["executor"] = kExecutorVersion;
  nlohmann::json entries = nlohmann::json::object();
  for (auto& [k, v] : table_) entries[k] = v;
  j["entries"] = entries;
  if (calib_.fitted)
    j["calibration"] = {{"scale", calib_.scale},         {"per_op_us", calib_.per_op_us},
                        {"per_mb_us", calib_.per_mb_us}, {"per_graph_us", calib_.per_graph_us},
                        {"samples", calib_.samples},     {"fit_error", calib_.fit_error}};
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  std::string tmp = path_ + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(1) << "\n";
    if (!out) throw Error(fmt::format("cannot write {}", tmp));
  }
  std::filesystem::rename(tmp, path_);
  dirty_ = false;
}

double MeasuredCostModel::isolated_us(const OpConfig& c) {
  // A residual addition computed by a convolution (conv_add) costs its convolution plus
  // reading the residual once from memory. Timed alone it measured more than its convolution,
  // ewadd and relu timed alone (ResNet-50's 64 -> 256 channels, 56x56: 1,037 us against
  // 804 + 121 + 72 us), because isolated element-wise operators find their operands in the
  // caches, and the search then never fused; in whole runs the fusion saves time (docs/
  // benchmarks.md, Optimizer).
  if (c.op->name == "conv_add") {
    OpConfig conv = c;
    conv.op = &op_def("conv");
    conv.attrs.set("act", std::string("none"));
    conv.in.erase(conv.in.begin() + 2);
    conv.in_constant.erase(conv.in_constant.begin() + 2);
    double residual_mb = static_cast<double>(c.in[2].numel() * dtype_size(c.in[2].dtype)) / 1e6;
    return isolated_us(conv) + residual_mb / machine_.bandwidth_gbs * 1e3;
  }
  // A fused activation is applied in registers as the result is written (a oneDNN post-op)
  // and costs next to nothing, but timing fused and unfused twins separately lets machine
  // noise choose between them: on a loaded machine fused convolutions measured up to 3x their
  // unfused twins, and the search unfused activations all over Inception-v3 (46 times). Both
  // are timed as the unfused configuration, so a separate activation always costs extra.
  if (runs_as_gemm(*c.op) && c.attrs.has("act") && c.attrs.s("act") != "none") {
    OpConfig plain = c;
    plain.attrs.set("act", std::string("none"));
    return isolated_us(plain);
  }
  std::string key = config_key(c);
  auto it = table_.find(key);
  if (it != table_.end()) return it->second;
  double us = 0;
  if (c.op->cls == OpClass::Opaque) {
    // Not executable: price it as streaming its tensors once at the machine's bandwidth.
    us = megabytes(c) / machine_.bandwidth_gbs * 1e3;
  } else {
    auto [g, node] = measurement_graph(c);
    OnednnExecutor ex(g, {.threads = machine_.threads});
    auto feeds = random_feeds(g, 5);
    std::vector<NodeTime> times;
    auto node_seconds = [&, node = node] {  // clang 14 cannot capture a binding by [&]
      times.clear();
      ex.run(feeds, times);
      double s = 0;
      for (auto& t : times)
        if (t.node == node) s += t.seconds;
      return s;
    };
    node_seconds();  // warm-up
    // The fastest of several runs: an isolated operator's own cost, without the time other
    // processes on a shared machine take from it (which only ever adds).
    double first = node_seconds();
    int runs = first > 5e-3 ? 5 : first > 5e-4 ? 9 : 21;
    us = first * 1e6;
    for (int r = 0; r < runs; ++r) us = std::min(us, node_seconds() * 1e6);
  }
  table_[key] = us;
  dirty_ = true;
  ++measured_now_;
  if (measured_now_ % 50 == 0)
    reporter_.progress("measure", static_cast<double>(measured_now_), 0,
                       fmt::format("{} operator configurations timed", measured_now_));
  return us;
}

// Views cost nothing, calibration included. A configuration that ran as no work in isolation
// but is not a view in a real graph (a concat whose inputs' producers write into its buffer
// there, but not in every real graph) is priced as its memory traffic.
//
// An isolated run keeps an operator's weights in the caches between runs; a real run of a
// model whose weights exceed the caches streams them from memory every time. The price is at
// least that streaming (NasRNN: a 512x512 matrix-vector product measured 13 us in isolation,
// 42 us in a chain whose weights do not fit the caches).
double MeasuredCostModel::config_cost(const OpConfig& c) {
  if (runs_as_view(c)) return 0;
  double t = real_run_us(c);
  if (!calib_.fitted) return t;
  return calib_.scale * t + calib_.per_op_us + calib_.per_mb_us * megabytes(c);
}

double MeasuredCostModel::real_run_us(const OpConfig& c) {
  double t = isolated_us(c);
  if (t == 0) t = megabytes(c) / machine_.bandwidth_gbs * 1e3;
  double weight_bytes = 0;
  for (size_t i = 0; i < c.in.size(); ++i)
    if (c.in_constant[i])
      weight_bytes += static_cast<double>(c.in[i].numel() * dtype_size(c.in[i].dtype));
  if (weight_bytes == 0) return t;
  // A GEMM streaming its weights also pays the per-GEMM overhead the machine profile measured
  // on such streams (an isolated run with hot caches hides it).
  double stream = weight_bytes / (machine_.bandwidth_gbs * 1e3) +
                  (runs_as_gemm(*c.op) ? machine_.overhead_us(true) : 0);
  return std::max(t, stream);
}

CalibrationFeatures MeasuredCostModel::features(const Graph& g) {
  auto constant = constant_nodes(g);
  CalibrationFeatures f;
  for (NodeId id = 0; id < g.num_slots(); ++id) {
    if (!g.alive(id) || g.node(id).is_source() || constant[id]) continue;
    OpConfig c = op_config(g, id, constant);
    if (runs_as_view(c)) continue;
    f.isolated_us += real_run_us(c);
    f.ops += 1;
    f.megabytes += megabytes(c);
  }
  return f;
}

}  // namespace graphsub::opt
