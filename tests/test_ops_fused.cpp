// The runtimes' fused operators (src/ops/fused_ops.cpp): each kernel against a straightforward
// computation written here, their shapes and errors, where they stand in the generator's
// operator set, and their ONNX nodes read and written (com.microsoft, outputs by index).
// tests/python/test_fused_ops.py compares the same kernels with ONNX Runtime's.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>

#include "gen/space/gen_op.h"
#include "onnx/onnx_model.h"
#include "ops/op_def.h"
#include "support/op_harness.h"

namespace graphsub {
namespace {

using testutil::contains;
using testutil::max_rel_error;
using testutil::random_f32;
using testutil::run_op;

HostTensor<float> layernorm_rows(const HostTensor<float>& x, const HostTensor<float>& g,
                                 const HostTensor<float>* b, double eps, bool rms) {
  HostTensor<float> y{x.shape, std::vector<float>(x.data.size())};
  int64_t h = x.shape.back(), rows = numel(x.shape) / h;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < h; ++i) mean += x.data[r * h + i] / static_cast<double>(h);
    if (rms) mean = 0;
    for (int64_t i = 0; i < h; ++i) {
      double d = x.data[r * h + i] - mean;
      sq += d * d / static_cast<double>(h);
    }
    for (int64_t i = 0; i < h; ++i)
      y.data[r * h + i] = static_cast<float>(
          (x.data[r * h + i] - mean) / std::sqrt(sq + eps) * g.data[i] + (b ? b->data[i] : 0.0));
  }
  return y;
}

HostTensor<float> plus(const HostTensor<float>& a, const HostTensor<float>& b) {
  HostTensor<float> s = a;
  int64_t h = b.shape.back();
  for (size_t i = 0; i < s.data.size(); ++i)
    s.data[i] += b.data.size() == a.data.size() ? b.data[i] : b.data[i % h];
  return s;
}

TEST(FusedOps, SkipLayerNormWritesTheNormalizedSumAndTheSum) {
  std::mt19937 rng(1);
  auto x = random_f32({2, 3, 8}, rng), s = random_f32({2, 3, 8}, rng);
  auto g = random_f32({8}, rng), be = random_f32({8}, rng), bi = random_f32({8}, rng);
  auto out = run_op<float>("ort_skip_layernorm", {x, s, g, be, bi}, {{"epsilon", 1e-5}});
  ASSERT_EQ(out.size(), 2u);
  HostTensor<float> sum = plus(plus(x, s), bi);
  EXPECT_LT(max_rel_error(out[1], sum), 1e-6);
  EXPECT_LT(max_rel_error(out[0], layernorm_rows(sum, g, &be, 1e-5, false)), 1e-4);
  // Without beta and bias: layernorm of x + skip, scale only.
  auto plain = run_op<float>("ort_skip_layernorm", {x, s, g}, {{"epsilon", 1e-5}});
  EXPECT_LT(max_rel_error(plain[0], layernorm_rows(plus(x, s), g, nullptr, 1e-5, false)), 1e-4);
}

TEST(FusedOps, SkipSimplifiedLayerNormIsTheRmsNormOfTheSum) {
  std::mt19937 rng(2);
  auto x = random_f32({4, 8}, rng), s = random_f32({4, 8}, rng);
  auto g = random_f32({8}, rng), bi = random_f32({8}, rng);
  auto out = run_op<float>("ort_skip_simplified_layernorm", {x, s, g, bi}, {{"epsilon", 1e-6}});
  HostTensor<float> sum = plus(plus(x, s), bi);
  EXPECT_LT(max_rel_error(out[1], sum), 1e-6);
  EXPECT_LT(max_rel_error(out[0], layernorm_rows(sum, g, nullptr, 1e-6, true)), 1e-4);
  auto simple = run_op<float>("ort_simplified_layernorm", {x, g}, {{"epsilon", 1e-6}});
  EXPECT_LT(max_rel_error(simple[0], layernorm_rows(x, g, nullptr, 1e-6, true)), 1e-4);
}

TEST(FusedOps, FusedMatMulTransposesTheLastTwoAxesAndScales) {
  std::mt19937 rng(3);
  auto a = random_f32({2, 5, 3}, rng), b = random_f32({2, 4, 5}, rng);
  auto out = run_op<float>("ort_fused_matmul", {a, b},
                           {{"alpha", 0.5}, {"transA", int64_t{1}}, {"transB", int64_t{1}}});
  ASSERT_EQ(out[0].shape, (Shape{2, 3, 4}));
  HostTensor<float> want{{2, 3, 4}, std::vector<float>(24)};
  for (int bt = 0; bt < 2; ++bt)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        double acc = 0;
        for (int k = 0; k < 5; ++k)
          acc += a.data[bt * 15 + k * 3 + i] * b.data[bt * 20 + j * 5 + k];
        want.data[bt * 12 + i * 4 + j] = static_cast<float>(0.5 * acc);
      }
  EXPECT_LT(max_rel_error(out[0], want), 1e-5);
}

TEST(FusedOps, GeluVariantsMatchTheirFormulas) {
  std::mt19937 rng(4);
  auto x = random_f32({3, 4}, rng), bias = random_f32({4}, rng);
  auto biased = run_op<float>("ort_bias_gelu", {x, bias})[0];
  auto fast = run_op<float>("ort_fast_gelu", {x, bias})[0];
  auto quick = run_op<float>("ort_quick_gelu", {x}, {{"alpha", 1.702}})[0];
  for (size_t i = 0; i < x.data.size(); ++i) {
    double v = x.data[i] + bias.data[i % 4];
    EXPECT_NEAR(biased.data[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-5);
    EXPECT_NEAR(fast.data[i], 0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v))),
                1e-5);
    double u = x.data[i];
    EXPECT_NEAR(quick.data[i], u / (1 + std::exp(-1.702 * u)), 1e-5);
  }
}

TEST(FusedOps, ShapeErrorsNameTheOperand) {
  EXPECT_TRUE(contains(testutil::infer_error("ort_bias_gelu", {{2, 8}, {4}}), "bias must be [8]"));
  EXPECT_TRUE(contains(testutil::infer_error("ort_skip_layernorm", {{2, 8}, {1, 8}, {8}}),
                       "skip [1,8] must have the input's shape [2,8]"));
  EXPECT_TRUE(contains(testutil::infer_error("ort_fused_matmul", {{2, 3}, {4, 5}}), "inner sizes"));
}

TEST(FusedOps, RuntimeKernelsStayOutOfThePortableGeneratorSet) {
  auto ops = gen::all_generator_ops();
  for (const OpDef* d : all_ops()) {
    if (!d->runtime.empty()) {
      EXPECT_EQ(std::count(ops.begin(), ops.end(), d->axiom_name), 0) << d->name;
    }
  }
  // The primitives they are made of are portable operators of the language.
  for (const char* p : {"gelu", "gelu_tanh", "layernorm", "rms_norm"})
    EXPECT_EQ(std::count(ops.begin(), ops.end(), std::string(p)), 1) << p;
  EXPECT_EQ(op_def("ort_skip_layernorm").runtime, "onnxruntime");
  EXPECT_TRUE(op_def("rms_norm").runtime.empty());
}

TEST(OnnxFused, ASkipLayerNormIsWrittenInItsDomainWithTheSumAsOutputThree) {
  Graph g;
  TensorType t;
  t.shape = {2, 3, 8};
  TensorType v;
  v.shape = {8};
  auto x = g.add_input("x", t), s = g.add_input("s", t);
  auto gamma = g.add_weight("gamma", v, std::make_shared<std::vector<float>>(8, 1.0f));
  NodeId n = g.add("ort_skip_layernorm", {{x, 0}, {s, 0}, {gamma, 0}}, {{"epsilon", 1e-5}}, "sln");
  g.add_output("y", {n, 0});
  g.add_output("sum", {n, 1});
  std::string bytes = export_onnx_bytes(g, nullptr, {});
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  const onnx::NodeProto* node = nullptr;
  for (const auto& nd : m.graph().node())
    if (nd.op_type() == "SkipLayerNormalization") node = &nd;
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->domain(), "com.microsoft");
  ASSERT_EQ(node->output_size(), 4);
  EXPECT_TRUE(node->output(1).empty() && node->output(2).empty());
  bool imports_domain = false;
  for (const auto& o : m.opset_import()) imports_domain |= o.domain() == "com.microsoft";
  EXPECT_TRUE(imports_domain);
  // Read back: the same operator, both outputs bound.
  ImportedModel back = import_onnx_bytes(bytes, "");
  int fused = 0;
  for (NodeId id = 0; id < back.graph.num_slots(); ++id)
    if (back.graph.alive(id) && back.graph.node(id).op->name == "ort_skip_layernorm") ++fused;
  EXPECT_EQ(fused, 1);
  ASSERT_EQ(back.graph.outputs().size(), 2u);
  EXPECT_EQ(back.graph.outputs()[1].ref.output, 1u);

  // Where nothing reads the sum, the node does not ask ONNX Runtime for it.
  Graph only_y;
  auto x2 = only_y.add_input("x", t), s2 = only_y.add_input("s", t);
  auto g2 = only_y.add_weight("gamma", v, std::make_shared<std::vector<float>>(8, 1.0f));
  NodeId n2 = only_y.add("ort_skip_layernorm", {{x2, 0}, {s2, 0}, {g2, 0}}, {{"epsilon", 1e-5}});
  only_y.add_output("y", {n2, 0});
  onnx::ModelProto m2;
  ASSERT_TRUE(m2.ParseFromString(export_onnx_bytes(only_y, nullptr, {})));
  int written = 0;
  for (const auto& nd : m2.graph().node()) {
    if (nd.op_type() != "SkipLayerNormalization") continue;
    ++written;
    EXPECT_EQ(nd.output_size(), 1);
  }
  EXPECT_EQ(written, 1);
}

}  // namespace
}  // namespace graphsub
