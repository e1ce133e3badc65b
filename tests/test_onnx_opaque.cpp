// An operator from a custom domain is kept as an opaque node: the optimizer rewrites around
// it, the result check compares the regions between opaque nodes, and the node is written
// back with its op_type, domain, attributes and absent inputs. Also: external data.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"
#include "check/equivalence.h"
#include "exec/reference_executor.h"
#include "ir/hash.h"
#include "onnx/onnx_model.h"
#include "opt/cost/analytic_cost.h"
#include "opt/search/optimize.h"
#include "support/shipped_library.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

using testing::fixed_cost;
using testing::OnnxBuilder;
using testing::scratch_dir;

// x -> Conv -> BatchNormalization -> Relu -> com.example:Gain -> Conv -> Relu -> y
OnnxBuilder custom_domain_model() {
  OnnxBuilder b(13);
  auto* o = b.m.add_opset_import();
  o->set_domain("com.example");
  o->set_version(1);
  b.input("x", {1, 4, 8, 8});
  b.init("w1", {4, 4, 3, 3});
  auto& c1 = b.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  OnnxBuilder::attr(c1, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.init("bn_s", {4});
  b.init("bn_b", {4});
  b.init("bn_m", {4});
  b.init("bn_v", {4}, 3, 0.5f, 1.5f);
  b.node("BatchNormalization", {"c1", "bn_s", "bn_b", "bn_m", "bn_v"}, {"bn"}, "bn1");
  b.node("Relu", {"bn"}, {"r1"}, "relu1");
  b.init("gain", {4});
  auto& sc = b.node("Gain", {"r1", "", "gain"}, {"s"}, "custom_scale");
  sc.set_domain("com.example");
  OnnxBuilder::attr(sc, "factor", 2.0f);
  OnnxBuilder::attr(sc, "mode", std::string("fast"));
  auto* floats = sc.add_attribute();
  floats->set_name("table");
  floats->set_type(onnx::AttributeProto::FLOATS);
  for (float v : {1.0f, 2.5f, -3.0f}) floats->add_floats(v);
  auto* tensor = sc.add_attribute();
  tensor->set_name("bias_tensor");
  tensor->set_type(onnx::AttributeProto::TENSOR);
  tensor->mutable_t()->set_data_type(7);
  tensor->mutable_t()->add_dims(2);
  tensor->mutable_t()->add_int64_data(5);
  tensor->mutable_t()->add_int64_data(-6);
  b.value_info("s", {1, 4, 8, 8});  // ONNX cannot infer a custom operator's shape
  b.init("w2", {8, 4, 1, 1});
  b.node("Conv", {"s", "w2"}, {"c2"}, "conv2");
  b.node("Relu", {"c2"}, {"y"}, "relu2");
  b.output("y", {1, 8, 8, 8});
  return b;
}

const onnx::NodeProto* find_node(const onnx::ModelProto& m, const std::string& op_type) {
  for (const auto& n : m.graph().node())
    if (n.op_type() == op_type) return &n;
  return nullptr;
}

std::map<std::string, std::string> attributes(const onnx::NodeProto& n) {
  std::map<std::string, std::string> a;
  for (const auto& at : n.attribute()) a[at.name()] = at.SerializeAsString();
  return a;
}

TEST(OnnxOpaque, CustomDomainOperatorOptimizesAroundAndRoundTrips) {
  OnnxBuilder b = custom_domain_model();
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  ASSERT_EQ(m.summary.opaque.size(), 1u);
  EXPECT_EQ(m.summary.opaque[0].name, "custom_scale");
  EXPECT_EQ(m.summary.opaque[0].domain, "com.example");
  EXPECT_EQ(m.graph.num_ops(), 6u);

  opt::OptimizeOptions opts;
  auto cost = fixed_cost();
  opt::OptimizeResult r =
      opt::optimize_graph(m.graph, opts, testutil::shipped_library(), cost, null_reporter());
  // Batchnorm folded into conv1 and both relus fused: three operators fewer.
  EXPECT_EQ(r.optimized.num_ops(), 3u);
  EXPECT_LT(r.final_cost, r.initial_cost);
  size_t opaque = 0;
  for (NodeId id = 0; id < r.optimized.num_slots(); ++id)
    if (r.optimized.alive(id) && r.optimized.node(id).op->cls == OpClass::Opaque) ++opaque;
  EXPECT_EQ(opaque, 1u);
  // The optimizer's own check cut the graphs at the opaque node too.
  EXPECT_TRUE(r.checked);
  EXPECT_TRUE(r.check.ok);
  EXPECT_EQ(r.check.opaque_cut, 1u);

  ResultCheck rc = check_equivalent(m.graph, r.optimized, {.runs = 2, .seed = 1});
  EXPECT_TRUE(rc.ok);
  EXPECT_EQ(rc.opaque_cut, 1u);
  ASSERT_EQ(rc.tensors.size(), 2u);  // the graph output and the tensor the opaque node reads
  EXPECT_TRUE(rc.tensors[1].boundary);
  EXPECT_NE(rc.scope().find("opaque"), std::string::npos);

  // Written back: same op_type, domain, attributes, absent input; opset and shape declared.
  std::string bytes = export_onnx_bytes(r.optimized, m.info.get());
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(bytes));
  const onnx::NodeProto* sc = find_node(out, "Gain");
  ASSERT_NE(sc, nullptr);
  EXPECT_EQ(sc->domain(), "com.example");
  ASSERT_EQ(sc->input_size(), 3);
  EXPECT_EQ(sc->input(1), "");
  EXPECT_EQ(attributes(*sc), attributes(*find_node(b.m, "Gain")));
  bool has_domain = false;
  for (const auto& o : out.opset_import())
    has_domain |= o.domain() == "com.example" && o.version() == 1;
  EXPECT_TRUE(has_domain);
  bool declared = false;
  for (const auto& vi : out.graph().value_info()) declared |= vi.name() == sc->output(0);
  EXPECT_TRUE(declared);
  EXPECT_EQ(find_node(out, "BatchNormalization"), nullptr);

  // It imports again (fused activations come back as separate Relu nodes), computing the same.
  ImportedModel again = import_onnx_bytes(bytes, "");
  EXPECT_EQ(again.graph.num_ops(), 5u);
  EXPECT_EQ(again.summary.opaque.size(), 1u);
  EXPECT_TRUE(check_equivalent(r.optimized, again.graph, {.runs = 1, .seed = 2}).ok);
}

TEST(OnnxOpaque, TheCutCheckCatchesAWrongRewriteBeforeTheOpaqueNode) {
  ImportedModel m = import_onnx_bytes(custom_domain_model().bytes(), "");
  Graph broken = m.graph;
  for (NodeId id : broken.weights())
    if (broken.node(id).name == "w1") {
      auto data = std::make_shared<std::vector<float>>(*broken.node(id).data);
      (*data)[0] += 0.5f;  // only the region before the opaque node changes
      broken.set_weight_data(id, data);
    }
  ResultCheck rc = check_equivalent(m.graph, broken, {.runs = 1, .seed = 1});
  EXPECT_FALSE(rc.ok);
  ASSERT_EQ(rc.tensors.size(), 2u);
  EXPECT_FALSE(rc.tensors[1].ok);  // seen at the opaque node's input
  EXPECT_TRUE(rc.tensors[0].ok);   // the output itself only sees the opaque node's stand-in
}

TEST(OnnxOpaque, ChecksOnTheOnednnExecutorAgreeWithTheReference) {
  ImportedModel m = import_onnx_bytes(custom_domain_model().bytes(), "");
  ResultCheck a =
      check_equivalent(m.graph, m.graph, {.runs = 1, .seed = 4, .executor = CheckExecutor::Onednn});
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.executor, "onednn");
}

TEST(OnnxOpaque, OpaqueGraphsWithoutMatchingNodesAreRefused) {
  ImportedModel m = import_onnx_bytes(custom_domain_model().bytes(), "");
  GraphBuilder gb;
  gb.output("y", gb.relu(gb.input("x", {1, 8, 8, 8})));
  Graph other = gb.finish();
  EXPECT_THROW(check_equivalent(m.graph, other, {.runs = 1}), Error);
}

TEST(OnnxExternalData, WrittenAndReadBack) {
  OnnxBuilder b = custom_domain_model();
  // A weight above the 1 KiB threshold of external storage (w1 is 576 bytes).
  b.g().mutable_initializer(0)->clear_dims();
  b.g().mutable_initializer(0)->clear_float_data();
  for (int64_t d : {4, 4, 5, 5}) b.g().mutable_initializer(0)->add_dims(d);
  for (float v : random_values(400, 9)) b.g().mutable_initializer(0)->add_float_data(v);
  auto* pads = b.g().mutable_node(0)->mutable_attribute(0);
  for (int i = 0; i < 4; ++i) pads->set_ints(i, 2);
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  std::string dir = scratch_dir("external");
  std::string path = dir + "/model.onnx";
  std::filesystem::remove(path + ".data");
  ExportOptions opts;
  opts.external_data = true;
  export_onnx_file(m.graph, m.info.get(), path, opts);
  ASSERT_TRUE(std::filesystem::exists(path + ".data"));
  EXPECT_GE(std::filesystem::file_size(path + ".data"), 400u * 4);
  // The model file itself holds no large weights.
  EXPECT_LT(std::filesystem::file_size(path), 2000u);
  ImportedModel again = import_onnx_file(path);
  EXPECT_EQ(structural_hash(again.graph), structural_hash(m.graph));
  for (NodeId id : again.graph.weights()) {
    const Node& w = again.graph.node(id);
    if (w.name != "w1") continue;
    for (NodeId j : m.graph.weights())
      if (m.graph.node(j).name == "w1") {
        EXPECT_EQ(*w.data, *m.graph.node(j).data);
      }
  }
}

}  // namespace
}  // namespace graphsub
