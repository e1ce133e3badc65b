#pragma once
// Helpers for the ONNX tests: a small builder of ONNX models in code, running commands, and
// running models in ONNX Runtime through the Node scripts under tools/.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exec/host_tensor.h"
#include "ir/builder.h"
#include "ir/hash.h"
#include "opt/cost/analytic_cost.h"
#include "opt/search/optimize.h"
#include "support/shipped_library.h"

namespace graphsub::testing {

inline bool sanitized() {
#if defined(GRAPHSUB_ASAN)
  return true;
#else
  return std::getenv("GRAPHSUB_SANITIZED") != nullptr;
#endif
}

// For command-line tests of a model of a few operators: what they assert (messages, files,
// reports) does not depend on how far the search goes, and the default 1000-graph search of
// such a model took 2 s per run in release and 30 s under the sanitizers.
inline constexpr const char* kSmallSearch = "--budget 100";

inline std::string scratch_dir(const std::string& sub) {
  auto dir = std::filesystem::path(GRAPHSUB_BINARY_DIR) / "onnx_test" / sub;
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Runs a shell command; returns its exit status and (optionally) its stdout+stderr.
inline int run_command(const std::string& cmd, std::string* output = nullptr) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  if (output) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The graphsub command of this build.
inline std::string graphsub_bin() {
  return std::string(GRAPHSUB_BINARY_DIR) + "/graphsub";
}

inline std::string tool(const std::string& name) {
  return (std::filesystem::path(GRAPHSUB_SOURCE_DIR) / "tools" / name).string();
}

// A torchvision model exported with random weights (cached under the build folder); with
// `dynamic`, its batch axis (and a transformer's sequence axis) is symbolic.
inline std::string torchvision_model(const std::string& name, int size, bool dynamic = false) {
  std::string dir = scratch_dir("torchvision");
  std::string path = fmt::format("{}/{}_{}{}.onnx", dir, name, size, dynamic ? "_dynamic" : "");
  if (std::filesystem::exists(path)) return path;  // exported by an earlier run
  std::string out;
  int rc = run_command(
      fmt::format("{} {} {} {} --size {}{}", GRAPHSUB_TEST_PYTHON, tool("export_torchvision.py"),
                  dir, name, size, dynamic ? " --dynamic" : ""),
      &out);
  if (rc != 0)
    throw std::runtime_error("exporting " + name +
                             " failed (the project venv's torch and torchvision, "
                             "scripts/setup.sh):\n" +
                             out);
  return path;
}

// Runs a model in ONNX Runtime on the given float inputs (in the model's input order).
inline std::vector<HostTensor<float>> ort_run(const std::string& model,
                                              const std::vector<HostTensor<float>>& inputs) {
  std::string dir = scratch_dir("ort_run");
  std::string stem = std::filesystem::path(model).stem().string();
  std::string in_path = dir + "/" + stem + ".in.bin", out_path = dir + "/" + stem + ".out.bin";
  {
    std::ofstream f(in_path, std::ios::binary);
    for (const auto& t : inputs)
      f.write(reinterpret_cast<const char*>(t.data.data()),
              static_cast<std::streamsize>(t.data.size() * sizeof(float)));
  }
  std::string out;
  int rc = run_command(
      fmt::format("node {} {} {} {}", tool("ort_run.js"), model, in_path, out_path), &out);
  if (rc != 0) throw std::runtime_error("ONNX Runtime failed on " + model + ":\n" + out);
  // stdout: [{"name":..,"shape":[..]},..]; parse the shapes without a JSON library.
  std::vector<HostTensor<float>> results;
  std::ifstream f(out_path, std::ios::binary);
  size_t pos = 0;
  while ((pos = out.find("\"shape\":[", pos)) != std::string::npos) {
    pos += 9;
    size_t end = out.find(']', pos);
    HostTensor<float> t;
    std::string dims = out.substr(pos, end - pos);
    size_t k = 0;
    while (k < dims.size()) {
      size_t comma = dims.find(',', k);
      if (comma == std::string::npos) comma = dims.size();
      if (comma > k) t.shape.push_back(std::stoll(dims.substr(k, comma - k)));
      k = comma + 1;
    }
    t.data.resize(static_cast<size_t>(numel(t.shape)));
    f.read(reinterpret_cast<char*>(t.data.data()), static_cast<std::streamsize>(t.data.size() * 4));
    results.push_back(std::move(t));
  }
  return results;
}

// Builds small ONNX models in code.
class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset = 13) {
    m.set_ir_version(8);
    m.set_producer_name("graphsub-test");
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m.mutable_graph()->set_name("test");
  }
  onnx::ModelProto m;
  onnx::GraphProto& g() { return *m.mutable_graph(); }

  void value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
             const std::string& name, const Shape& shape, int32_t elem) {
    auto* vi = list->Add();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* s = tt->mutable_shape();
    for (int64_t d : shape) s->add_dim()->set_dim_value(d);
  }
  void input(const std::string& name, const Shape& shape, int32_t elem = 1) {
    value(g().mutable_input(), name, shape, elem);
  }
  void output(const std::string& name, const Shape& shape, int32_t elem = 1) {
    value(g().mutable_output(), name, shape, elem);
  }
  void output_untyped(const std::string& name) { g().add_output()->set_name(name); }
  // Makes dimension `axis` of a declared value (a graph input or output) the symbol `name`.
  static void symbolic_dim(onnx::ValueInfoProto* v, int axis, const std::string& name) {
    v->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(axis)->set_dim_param(
        name);
  }
  void value_info(const std::string& name, const Shape& shape, int32_t elem = 1) {
    value(g().mutable_value_info(), name, shape, elem);
  }
  void init(const std::string& name, const Shape& shape, uint64_t seed = 7, float lo = -1.f,
            float hi = 1.f) {
    auto* t = g().add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    for (int64_t d : shape) t->add_dims(d);
    for (float v : random_values(numel(shape), seed ^ hash_bytes(name.data(), name.size()), lo, hi))
      t->add_float_data(v);
  }
  // Integer and float initializers with given values: 1-d unless a shape is given ({} for
  // a scalar).
  onnx::TensorProto& init_of(const std::string& name, int32_t type, size_t n,
                             const std::optional<Shape>& shape) {
    auto* t = g().add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : shape.value_or(Shape{static_cast<int64_t>(n)})) t->add_dims(d);
    return *t;
  }
  void init_ints(const std::string& name, const std::vector<int64_t>& v,
                 std::optional<Shape> shape = std::nullopt) {
    auto& t = init_of(name, 7, v.size(), shape);
    for (int64_t x : v) t.add_int64_data(x);
  }
  void init_floats(const std::string& name, const std::vector<float>& v,
                   std::optional<Shape> shape = std::nullopt) {
    auto& t = init_of(name, 1, v.size(), shape);
    for (float x : v) t.add_float_data(x);
  }
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> ins,
                        std::vector<std::string> outs, const std::string& name = "") {
    auto* n = g().add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? fmt::format("{}_{}", op, g().node_size()) : name);
    for (auto& s : ins) n->add_input(s);
    for (auto& s : outs) n->add_output(s);
    return *n;
  }
  static void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  static void attr(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  std::string bytes() const { return m.SerializeAsString(); }
  std::string save(const std::string& path) const {
    std::ofstream f(path, std::ios::binary);
    m.SerializeToOstream(&f);
    return path;
  }
};

// How many live operator nodes of each IR operator `g` has (inputs and weights left out).
inline std::map<std::string, int> op_counts(const Graph& g) {
  std::map<std::string, int> n;
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id) && !g.node(id).is_source()) ++n[g.node(id).op->name];
  return n;
}

// An analytic cost model of a fixed machine, so that tests do not depend on this one.
inline opt::AnalyticCostModel fixed_cost() {
  opt::MachineProfile m;
  m.cpu = "test";
  m.threads = 1;
  m.peak_gflops = 50;
  m.bandwidth_gbs = 10;
  m.op_overhead_us = 2;
  return opt::AnalyticCostModel(m);
}

// A small optimization with the built-in rules and a fixed cost model.
inline opt::OptimizeResult optimize_small(const Graph& g, size_t budget) {
  opt::AnalyticCostModel cost = fixed_cost();
  opt::OptimizeOptions opts;
  opts.check = false;
  opts.search.budget = budget;
  return opt::optimize_graph(g, opts, testutil::shipped_library(), cost, null_reporter());
}

}  // namespace graphsub::testing
