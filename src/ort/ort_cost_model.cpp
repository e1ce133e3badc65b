#include "ort/ort_cost_model.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "ir/builder.h"
#include "onnx/onnx_model.h"
#include "opt/machine_profile.h"
#include "opt/measured_cost.h"

namespace graphsub::ort {
namespace {

// Bumped whenever what a price means changes, so that cached tables are measured again.
constexpr int kTableVersion = 1;
// Profiled runs per configuration: the worker takes each kernel's median.
constexpr int kProfileRuns = 9;

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
    for (auto& [k, v] : j.at("entries").items()) table_[k] = v.get<double>();
  } catch (const std::exception& e) {
    table_.clear();
    per_kernel_us_ = -1;
    reporter_.warn(fmt::format("ignoring unreadable cost table {}: {}", path_, e.what()));
  }
  ensure_per_kernel_cost();
}

void OrtCostModel::ensure_per_kernel_cost() {
  if (per_kernel_us_ >= 0) return;
  make_scratch();
  per_kernel_us_ = measure_per_kernel_us();
  dirty_ = true;
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
      "dispatch; table {}",
      worker_.runtime_version(), threads_, per_kernel_us_, path_);
}

void OrtCostModel::save() {
  if (!dirty_) return;
  nlohmann::json j;
  j["version"] = kTableVersion;
  j["runtime"] = worker_.runtime_version();
  j["threads"] = threads_;
  j["per_kernel_us"] = per_kernel_us_;
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
  return {p.at("total_ms").get<double>() * 1e3, p.at("kernels").get<int>()};
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
  if (it != table_.end()) return it->second;
  double us = 0;
  try {
    std::string path = fmt::format("{}/cfg.onnx", scratch_);
    export_onnx_file(opt::measurement_graph(c, /*conv_context=*/false).first, nullptr, path);
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
  return us;
}

}  // namespace graphsub::ort
