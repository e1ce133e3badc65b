#include "ort/ort_cost_model.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "ir/builder.h"
#include "onnx/onnx_model.h"
#include "opt/cost/machine_profile.h"
#include "opt/cost/measured_cost.h"

namespace graphsub::ort {
namespace {

// Bumped whenever what a price means changes, so that cached tables are measured again.
// 2: layout reorders no longer priced (see is_layout_reorder).
constexpr int kTableVersion = 2;
// Profiled runs per configuration: the worker takes each kernel's median.
constexpr int kProfileRuns = 9;

// The reorders ONNX Runtime inserts around a convolution run alone, into and out of its
// blocked (NCHWc) layout. In a model they sit only where a chain of such operators begins or
// ends, not around each one, so a convolution's price leaves them out. Counted, they made two
// convolutions of one tensor look dearer than one twice as wide plus a split (a phantom pair
// of reorders saved), and the search merged convolutions that ran 4 to 9% slower end to end.
bool is_layout_reorder(const std::string& kernel_op) {
  return kernel_op == "ReorderInput" || kernel_op == "ReorderOutput";
}

}  // namespace

OrtCostModel::OrtCostModel(Worker& worker, std::string cache_dir, int threads, Reporter& reporter)
    : worker_(worker), threads_(threads), reporter_(reporter) {
  path_ =
      (std::filesystem::path(cache_dir) /
       fmt::format("ort-op-costs-{}-ort{}.json", opt::cpu_tag(threads), worker.runtime_version()))
          .string();
  std::ifstream in(path_);
  if (!in) {
    ensure_per_kernel_cost();
    return;
  }
  try {
    auto j = nlohmann::json::parse(in);
    if (j.value("version", 0) != kTableVersion) {
      dirty_ = true;
      ensure_per_kernel_cost();
      return;
    }
    per_kernel_us_ = j.at("per_kernel_us").get<double>();
    weight_us_per_mb_ = j.value("weight_us_per_mb", -1.0);    // tables before them lack
    reorder_us_per_mb_ = j.value("reorder_us_per_mb", -1.0);  // these two
    for (auto& [k, v] : j.at("entries").items()) table_[k] = v.get<double>();
  } catch (const std::exception& e) {
    table_.clear();
    per_kernel_us_ = -1;
    weight_us_per_mb_ = -1;
    reorder_us_per_mb_ = -1;
    reporter_.warn(fmt::format("ignoring unreadable cost table {}: {}", path_, e.what()));
  }
  ensure_per_kernel_cost();
}

void OrtCostModel::ensure_per_kernel_cost() {
  if (per_kernel_us_ < 0) {
    make_scratch();
    per_kernel_us_ = measure_per_kernel_us();
    dirty_ = true;
  }
  if (weight_us_per_mb_ < 0) {
    make_scratch();
    weight_us_per_mb_ = measure_weight_us_per_mb();
    dirty_ = true;
  }
  if (reorder_us_per_mb_ < 0) {
    make_scratch();
    reorder_us_per_mb_ = measure_reorder_us_per_mb();
    dirty_ = true;
  }
}

OrtCostModel::~OrtCostModel() {
  try {
    save();
  } catch (const std::exception& e) {
    reporter_.warn(fmt::format("could not save the cost table {}: {}", path_, e.what()));
  }
  if (!scratch_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(scratch_, ec);
  }
}

std::string OrtCostModel::assumptions() const {
  // Nothing here may depend on how much of the table was cached: the same flags must give
  // the same report on a cold and a warm cache.
  return fmt::format(
      "ONNX Runtime {} kernel times per configuration ({} thread(s)), {:.2f} us per kernel "
      "dispatch, weights streamed at {:.0f} us/MB at least; table {}",
      worker_.runtime_version(), threads_, per_kernel_us_, weight_us_per_mb_, path_);
}

void OrtCostModel::save() {
  if (!dirty_) return;
  nlohmann::json j;
  j["version"] = kTableVersion;
  j["runtime"] = worker_.runtime_version();
  j["threads"] = threads_;
  j["per_kernel_us"] = per_kernel_us_;
  j["weight_us_per_mb"] = weight_us_per_mb_;
  j["reorder_us_per_mb"] = reorder_us_per_mb_;
  nlohmann::json entries = nlohmann::json::object();
  for (auto& [k, v] : table_) entries[k] = v;
  j["entries"] = entries;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  std::string tmp = fmt::format("{}.tmp{}", path_, getpid());
  {
    std::ofstream out(tmp);
    out << j.dump(1) << "\n";
    if (!out) throw Error(fmt::format("cannot write {}", tmp));
  }
  std::filesystem::rename(tmp, path_);
  dirty_ = false;
}

std::pair<double, int> OrtCostModel::profile_model(const std::string& path) {
  worker_.call(
      {{"op", "load"}, {"id", "cfg"}, {"path", path}, {"threads", threads_}, {"profile", true}});
  auto p = worker_.call({{"op", "profile"}, {"id", "cfg"}, {"runs", kProfileRuns}});
  worker_.call({{"op", "unload"}, {"id", "cfg"}});
  double us = 0;
  int kernels = 0;
  for (const auto& [op, ms] : p.at("by_op").items()) {
    if (is_layout_reorder(op)) continue;
    us += ms.get<double>() * 1e3;
    kernels += p.at("counts").at(op).get<int>();
  }
  return {us, kernels};
}

// What ONNX Runtime spends per kernel beyond the kernel itself (dispatch, allocation planning,
// profiling excluded): a chain of 64 relus on 8 floats, timed end to end, minus one relu's
// chain, over 63. The fastest of the timed runs, as for kernels.
double OrtCostModel::measure_per_kernel_us() {
  auto chain = [&](int n) {
    GraphBuilder b;
    auto x = b.input("x", {1, 8});
    for (int i = 0; i < n; ++i) x = b.relu(x);
    b.output("y", x);
    std::string path = fmt::format("{}/chain{}.onnx", scratch_, n);
    export_onnx_file(b.finish(), nullptr, path);
    return path;
  };
  std::string one = chain(1), many = chain(64);
  worker_.call({{"op", "load"}, {"id", "one"}, {"path", one}, {"threads", threads_}});
  worker_.call({{"op", "load"}, {"id", "many"}, {"path", many}, {"threads", threads_}});
  auto t = worker_.call({{"op", "time"}, {"ids", {"one", "many"}}, {"runs", 41}, {"warmup", 5}});
  worker_.call({{"op", "unload"}, {"id", "one"}});
  worker_.call({{"op", "unload"}, {"id", "many"}});
  auto fastest = [&](const char* id) {
    auto v = t.at("ms").at(id).get<std::vector<double>>();
    return *std::min_element(v.begin(), v.end()) * 1e3;
  };
  return std::max(0.0, (fastest("many") - fastest("one")) / 63.0);
}

// Weights that do not stay in the cache between runs: a chain of 32 matmuls x[1,1024] *
// W[1024,1024] (4 MB each, 128 MB in all, beyond any L3 this runs on), timed end to end; the
// fastest run less the dispatch cost, per MB of weights. Measured once, cached with the table.
double OrtCostModel::measure_weight_us_per_mb() {
  constexpr int kMatmuls = 32, kWidth = 1024;
  GraphBuilder b;
  auto x = b.input("x", {1, kWidth});
  for (int i = 0; i < kMatmuls; ++i)
    x = b.matmul(x, b.weight(fmt::format("w{}", i), {kWidth, kWidth}));
  b.output("y", x);
  std::string path = fmt::format("{}/streaming.onnx", scratch_);
  export_onnx_file(b.finish(), nullptr, path);
  worker_.call({{"op", "load"}, {"id", "stream"}, {"path", path}, {"threads", threads_}});
  auto t = worker_.call({{"op", "time"}, {"ids", {"stream"}}, {"runs", 9}, {"warmup", 2}});
  worker_.call({{"op", "unload"}, {"id", "stream"}});
  std::error_code ec;
  std::filesystem::remove(path, ec);
  auto v = t.at("ms").at("stream").get<std::vector<double>>();
  double us = *std::min_element(v.begin(), v.end()) * 1e3 - per_kernel_us_ * kMatmuls;
  double mb = kMatmuls * double(kWidth) * kWidth * 4 / 1e6;
  return std::max(0.0, us / mb);
}

// One 1x1 convolution of 64 channels on a [1, 64, 56, 56] image (0.8 MB) runs blocked, so
// ONNX Runtime reorders its input into the layout and its output back: their profiled kernel
// time over the 1.6 MB they copy.
double OrtCostModel::measure_reorder_us_per_mb() {
  constexpr int64_t kChannels = 64, kSide = 56;
  GraphBuilder b;
  auto x = b.input("x", {1, kChannels, kSide, kSide});
  b.output("y", b.conv(x, b.weight("w", {kChannels, kChannels, 1, 1})));
  std::string path = fmt::format("{}/reorders.onnx", scratch_);
  export_onnx_file(b.finish(), nullptr, path);
  worker_.call({{"op", "load"},
                {"id", "reorders"},
                {"path", path},
                {"threads", threads_},
                {"profile", true}});
  auto p = worker_.call({{"op", "profile"}, {"id", "reorders"}, {"runs", kProfileRuns}});
  worker_.call({{"op", "unload"}, {"id", "reorders"}});
  std::error_code ec;
  std::filesystem::remove(path, ec);
  double us = 0;
  for (const auto& [op, ms] : p.at("by_op").items())
    if (is_layout_reorder(op)) us += ms.get<double>() * 1e3;
  double mb = 2.0 * kChannels * kSide * kSide * 4 / 1e6;
  return std::max(0.0, us / mb);
}

double OrtCostModel::streaming_us(const opt::OpConfig& c) const {
  double bytes = 0;
  for (size_t i = 0; i < c.in.size(); ++i)
    if (i < c.in_constant.size() && c.in_constant[i])
      bytes +=
          static_cast<double>(c.in[i].numel()) * static_cast<double>(dtype_size(c.in[i].dtype));
  return per_kernel_us_ + weight_us_per_mb_ * bytes / 1e6;
}

void OrtCostModel::make_scratch() {
  if (!scratch_.empty()) return;
  std::string tmpl = (std::filesystem::temp_directory_path() / "graphsub-ort-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw Error(fmt::format("cannot create a folder like {}", tmpl));
  scratch_ = tmpl;
}

double OrtCostModel::config_cost(const opt::OpConfig& c) {
  make_scratch();
  // Opaque operators cannot be changed by a rewrite, so every candidate pays the same for
  // them: their price only has to be the same in every graph.
  if (c.op->cls == OpClass::Opaque) return 0;
  std::string key = opt::config_key(c);
  auto it = table_.find(key);
  if (it != table_.end()) return std::max(it->second, streaming_us(c));
  double us = 0;
  try {
    std::string path = fmt::format("{}/cfg.onnx", scratch_);
    // An operator of a newer opset than the exporter's default (ONNX's Attention) is timed in
    // a file of its first opset (the cache's keys do not hold the opset: one per operator).
    ExportOptions eo;
    eo.opset = c.op->onnx_since;
    export_onnx_file(opt::measurement_graph(c, /*conv_context=*/false).first, nullptr, path, eo);
    auto [kernel_us, kernels] = profile_model(path);
    us = kernel_us + per_kernel_us_ * kernels;
  } catch (const Error& e) {
    // A configuration the exporter or the runtime rejects alone (it may still run inside a
    // model) is priced by its memory traffic at 10 GB/s, and said once.
    auto cost = op_cost(*c.op, c.attrs, c.in, c.out);
    us = cost.bytes / 1e4 + cost.flops / 5e4;
    reporter_.warn(
        fmt::format("ONNX Runtime cost of {} not measured ({}); estimated", key, e.what()));
  }
  table_[key] = us;
  dirty_ = true;
  if (++measured_now_ % 20 == 0)
    reporter_.progress("measure", static_cast<double>(measured_now_), 0,
                       fmt::format("{} configurations timed in ONNX Runtime", measured_now_));
  return std::max(us, streaming_us(c));
}

}  // namespace graphsub::ort
