// Shape inference of every registered operator: valid cases give the expected types (split
// points included), invalid shapes and attributes are rejected with a message naming them.
#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "core/error.h"
#include "ops/op_def.h"
#include "support/op_harness.h"

namespace graphsub {
namespace {

using testutil::contains;
using testutil::f32;
using testutil::infer;
using testutil::infer_error;
using Ints = std::vector<int64_t>;

Shape shape0(std::string_view op, const std::vector<Shape>& ins, Attrs a = {}) {
  return infer(op, ins, std::move(a)).at(0).shape;
}

// Every operator in the registry must be covered below; adding one means adding its cases.
TEST(OpsShapes, EveryRegisteredOperatorIsCovered) {
  const std::set<std::string> covered = {"input",
                                         "weight",
                                         "const_pool",
                                         "const_iconv",
                                         "const_imatmul",
                                         "const_iewmul",
                                         "ewadd",
                                         "ewmul",
                                         "add",
                                         "sub",
                                         "mul",
                                         "div",
                                         "smul",
                                         "relu",
                                         "sigmoid",
                                         "tanh",
                                         "gelu",
                                         "erf",
                                         "exp",
                                         "sqrt",
                                         "identity",
                                         "matmul",
                                         "transpose",
                                         "conv",
                                         "enlarge",
                                         "poolavg",
                                         "poolmax",
                                         "global_avgpool",
                                         "concat",
                                         "split",
                                         "reshape",
                                         "flatten",
                                         "pad",
                                         "slice",
                                         "batchnorm",
                                         "softmax",
                                         "layernorm",
                                         "reduce_mean",
                                         "opaque",
                                         "conv_add",
                                         "relu6",
                                         "hardswish",
                                         "silu",
                                         "clip",
                                         "hardsigmoid",
                                         "leaky_relu",
                                         "pow",
                                         "prelu",
                                         "reduce_sum",
                                         "expand",
                                         "gather",
                                         "resize",
                                         "gelu_tanh",
                                         "rms_norm",
                                         "ort_bias_gelu",
                                         "ort_fast_gelu",
                                         "ort_quick_gelu",
                                         "ort_fused_matmul",
                                         "ort_skip_layernorm",
                                         "ort_skip_simplified_layernorm",
                                         "ort_simplified_layernorm",
                                         "ort_mha",
                                         "ort_attention",
                                         "attention",
                                         "neg",
                                         "nan_to_zero",
                                         "rotary_embedding",
                                         "ort_rotary_embedding",
                                         "ort_gqa"};
  for (const OpDef* op : all_ops()) EXPECT_TRUE(covered.count(op->name)) << op->name;
  EXPECT_EQ(all_ops().size(), covered.size());
}

TEST(OpsShapes, AttentionGivesOneRowPerQueryOfTheValuesWidth) {
  Attrs s{{"scale", 0.5}};
  EXPECT_EQ(shape0("attention", {{2, 6, 3, 4}, {2, 2, 5, 4}, {2, 2, 5, 7}}, s),
            (Shape{2, 6, 3, 7}));
  Attrs packed{{"scale", 0.5}, {"q_num_heads", 4}, {"kv_num_heads", 2}};
  EXPECT_EQ(shape0("attention", {{2, 3, 16}, {2, 5, 8}, {2, 5, 12}}, packed), (Shape{2, 3, 24}));
  EXPECT_EQ(shape0("attention", {{3, 4}, {5, 4}, {5, 2}}, s), (Shape{3, 2}));
  EXPECT_EQ(shape0("ort_mha", {{2, 3, 16}, {2, 5, 16}, {2, 5, 8}, {40}}, {{"num_heads", 4}}),
            (Shape{2, 3, 8}));
  EXPECT_EQ(shape0("ort_attention", {{2, 3, 6}, {6, 48}, {48}}, {{"num_heads", 4}}),
            (Shape{2, 3, 16}));
}

TEST(OpsShapes, GroupQueryAttentionAppendsToTheCacheAndChecksTheLengths) {
  Attrs heads{{"num_heads", 4}, {"kv_num_heads", 2}};
  auto with = [&](Ints lens, Ints total) {
    Attrs a = heads;
    a.set("seqlens_k", std::move(lens));
    a.set("total_sequence_length", std::move(total));
    return a;
  };
  // Decoding: one token after a past of 5; the present cache holds 6.
  auto out = infer("ort_gqa", {{2, 1, 32}, {2, 1, 16}, {2, 1, 16}, {2, 2, 5, 8}, {2, 2, 5, 8}},
                   with({5, 5}, {6}));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape, (Shape{2, 1, 32}));
  EXPECT_EQ(out[1].shape, (Shape{2, 2, 6, 8}));
  EXPECT_EQ(out[2].shape, (Shape{2, 2, 6, 8}));
  // A prompt without a past.
  EXPECT_EQ(infer("ort_gqa", {{1, 3, 32}, {1, 3, 16}, {1, 3, 16}}, with({2}, {3})).at(1).shape,
            (Shape{1, 2, 3, 8}));
  // The language's matrices: the present key is concat's, with its cut.
  Attrs one{{"num_heads", 1},
            {"kv_num_heads", 1},
            {"seqlens_k", Ints{3}},
            {"total_sequence_length", Ints{4}}};
  EXPECT_EQ(infer("ort_gqa", {{1, 2}, {1, 2}, {1, 2}, {3, 2}, {3, 2}}, one).at(1).str(),
            "f32[4,2]{split0:3}");
  // Padded batches, lengths that are not the cache's, and the forms ONNX Runtime's kernel
  // refuses are errors (the importer keeps such nodes opaque).
  EXPECT_TRUE(contains(
      infer_error("ort_gqa", {{2, 1, 32}, {2, 1, 16}, {2, 1, 16}, {2, 2, 5, 8}, {2, 2, 5, 8}},
                  with({5, 4}, {6})),
      "seqlens_k [5,4] are not 5"));
  EXPECT_TRUE(contains(infer_error("ort_gqa", {{1, 3, 32}, {1, 3, 16}, {1, 3, 16}}, with({2}, {4})),
                       "total_sequence_length [4]"));
  EXPECT_TRUE(contains(infer_error("ort_gqa", {{1, 3, 16}, {1, 3, 8}, {1, 3, 8}}, with({2}, {3})),
                       "head size 4 is not a multiple of 8"));
  EXPECT_TRUE(contains(
      infer_error("ort_gqa", {{2, 2, 32}, {2, 2, 16}, {2, 2, 16}, {2, 2, 5, 8}, {2, 2, 5, 8}},
                  with({6, 6}, {7})),
      "several batches of several tokens"));
  EXPECT_TRUE(contains(infer_error("ort_gqa", {{1, 3, 32}, {1, 3, 24}, {1, 3, 24}},
                                   {{"num_heads", 4}, {"kv_num_heads", 3}}),
                       "not a multiple of kv_num_heads 3"));
  EXPECT_TRUE(contains(
      infer_error("ort_gqa", {{1, 1, 32}, {1, 1, 16}, {1, 1, 16}, {1, 2, 5, 8}}, with({5}, {6})),
      "come together"));
  Attrs capped = with({2}, {3});
  capped.set("softcap", 30.0);
  EXPECT_TRUE(
      contains(infer_error("ort_gqa", {{1, 3, 32}, {1, 3, 16}, {1, 3, 16}}, capped), "softcap 30"));
}

TEST(OpsShapes, RotaryEmbeddingKeepsItsInputsShapeAndChecksTheAngles) {
  EXPECT_EQ(shape0("rotary_embedding", {{2, 3, 5, 8}, {2, 5, 4}, {2, 5, 4}}), (Shape{2, 3, 5, 8}));
  EXPECT_EQ(shape0("rotary_embedding", {{2, 5, 24}, {2, 5, 2}, {2, 5, 2}},
                   {{"num_heads", 3}, {"rotary_embedding_dim", 4}}),
            (Shape{2, 5, 24}));
  EXPECT_EQ(shape0("rotary_embedding", {{5, 8}, {5, 4}, {5, 4}}), (Shape{5, 8}));
  EXPECT_EQ(shape0("rotary_embedding", {{1, 2, 3, 8}, {10, 4}, {10, 4}},
                   {{"position_ids", Ints{7, 8, 9}}}),
            (Shape{1, 2, 3, 8}));
  EXPECT_TRUE(contains(infer_error("rotary_embedding", {{2, 3, 5, 8}, {2, 5, 3}, {2, 5, 3}}),
                       "cos and sin must be [2,5,4]"));
  EXPECT_TRUE(contains(infer_error("rotary_embedding", {{2, 3, 5, 7}, {2, 5, 3}, {2, 5, 3}}),
                       "must be even"));
  EXPECT_TRUE(
      contains(infer_error("rotary_embedding", {{2, 5, 24}, {2, 5, 4}, {2, 5, 4}}), "num_heads"));
  EXPECT_TRUE(contains(infer_error("rotary_embedding", {{1, 2, 3, 8}, {10, 4}, {10, 4}},
                                   {{"position_ids", Ints{7, 8, 10}}}),
                       "position id 10 outside the cache of 10 positions"));
  EXPECT_TRUE(contains(infer_error("rotary_embedding", {{5, 8}, {5, 4}, {5, 3}}), "differ"));
  // ONNX Runtime's: ids required; one id is the first position of each batch's sequence.
  EXPECT_EQ(
      shape0("ort_rotary_embedding", {{2, 3, 5, 8}, {9, 4}, {9, 4}}, {{"position_ids", Ints{4}}}),
      (Shape{2, 3, 5, 8}));
  EXPECT_TRUE(contains(infer_error("ort_rotary_embedding", {{2, 3, 5, 8}, {9, 4}, {9, 4}},
                                   {{"position_ids", Ints{5}}}),
                       "position id 9 outside the cache of 9 positions"));
  EXPECT_TRUE(contains(infer_error("ort_rotary_embedding", {{2, 3, 5, 8}, {9, 4}, {9, 4}}),
                       "position ids are required"));
  // A hostile offset or size is an error, not an overflow or a huge list.
  EXPECT_TRUE(contains(infer_error("ort_rotary_embedding", {{1, 3, 5, 8}, {9, 4}, {9, 4}},
                                   {{"position_ids", Ints{std::numeric_limits<int64_t>::max()}}}),
                       "out of range"));
  EXPECT_TRUE(
      contains(infer_error("ort_rotary_embedding", {{1 << 20, 1, 1 << 20, 2}, {9, 1}, {9, 1}},
                           {{"position_ids", Ints{0}}}),
               "graphsub spells out"));
}

TEST(OpsShapes, NormalizationsAndFusedOperatorsKeepTheInputsShape) {
  EXPECT_EQ(shape0("gelu_tanh", {{2, 3}}), (Shape{2, 3}));
  EXPECT_EQ(shape0("rms_norm", {{2, 3, 4}, {4}}), (Shape{2, 3, 4}));
  EXPECT_EQ(shape0("rms_norm", {{2, 3, 4}, {3, 4}}, {{"axis", 1}}), (Shape{2, 3, 4}));
  EXPECT_TRUE(contains(infer_error("rms_norm", {{2, 3, 4}, {3}}), "scale must be [4]"));
  EXPECT_EQ(shape0("ort_bias_gelu", {{2, 3, 4}, {4}}), (Shape{2, 3, 4}));
  EXPECT_EQ(shape0("ort_fast_gelu", {{2, 3, 4}}), (Shape{2, 3, 4}));
  EXPECT_EQ(shape0("ort_quick_gelu", {{5}}), (Shape{5}));
  EXPECT_EQ(shape0("ort_simplified_layernorm", {{2, 4}, {4}}), (Shape{2, 4}));
  EXPECT_EQ(shape0("ort_fused_matmul", {{2, 5, 3}, {2, 4, 5}},
                   {{"transA", int64_t{1}}, {"transB", int64_t{1}}}),
            (Shape{2, 3, 4}));
  auto skip = infer("ort_skip_layernorm", std::vector<Shape>{{2, 3, 4}, {2, 3, 4}, {4}, {4}, {4}});
  ASSERT_EQ(skip.size(), 2u);
  EXPECT_EQ(skip[1].shape, (Shape{2, 3, 4}));
  EXPECT_EQ(infer("ort_skip_simplified_layernorm", std::vector<Shape>{{3, 4}, {3, 4}, {4}}).size(),
            2u);
}

TEST(OpsShapes, EveryComputeOperatorHasBothKernels) {
  for (const OpDef* op : all_ops()) {
    if (op->cls != OpClass::Compute &&
        !(op->cls == OpClass::Source && op->name != "input" && op->name != "weight"))
      continue;
    EXPECT_NE(op->kernel_f32, nullptr) << op->name;
    EXPECT_NE(op->kernel_u32, nullptr) << op->name;
  }
}

TEST(OpsShapes, SourcesAndOpaqueAreNotInferred) {
  Graph g;
  EXPECT_THROW(op_def("input").infer({}, {}), Error);
  EXPECT_THROW(op_def("weight").infer({}, {}), Error);
  Attrs a{{"op_type", std::string("Foo")}};
  try {
    op_def("opaque").infer(a, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "Foo"));
  }
}

TEST(OpsShapes, Constants) {
  EXPECT_EQ(shape0("const_pool", {}, {{"channels", 4}, {"kernel", Ints{3, 3}}}),
            (Shape{4, 1, 3, 3}));
  EXPECT_EQ(shape0("const_iconv", {}, {{"channels", 4}, {"kernel", Ints{3, 1}}}),
            (Shape{4, 4, 3, 1}));
  EXPECT_EQ(shape0("const_imatmul", {}, {{"n", 5}}), (Shape{5, 5}));
  EXPECT_EQ(shape0("const_iewmul", {}, {{"shape", Ints{2, 3}}}), (Shape{2, 3}));
  EXPECT_TRUE(
      contains(infer_error("const_pool", {}, {{"channels", 4}, {"kernel", Ints{3}}}), "kernel"));
  EXPECT_TRUE(
      contains(infer_error("const_iconv", {}, {{"channels", 4}, {"kernel", Ints{2, 2}}}), "odd"));
  EXPECT_TRUE(contains(infer_error("const_imatmul", {}, {{"n", 0}}), "n must be positive"));
  EXPECT_TRUE(contains(infer_error("const_iewmul", {}, {{"shape", Ints{2, 0}}}), "[2,0]"));
  EXPECT_TRUE(contains(infer_error("const_pool", {}, {{"kernel", Ints{3, 3}}}), "channels"));
}

TEST(OpsShapes, Elementwise) {
  EXPECT_EQ(shape0("ewadd", {{2, 3}, {2, 3}}), (Shape{2, 3}));
  EXPECT_EQ(shape0("ewmul", {{4}, {4}}), (Shape{4}));
  for (const char* op : {"ewadd", "ewmul"}) {
    std::string e = infer_error(op, {{2, 3}, {3, 2}});
    EXPECT_TRUE(contains(e, "[2,3]"));
    EXPECT_TRUE(contains(e, "[3,2]"));
  }
  for (const char* op : {"add", "sub", "mul", "div"}) {
    EXPECT_EQ(shape0(op, {{2, 1, 4}, {3, 1}}), (Shape{2, 3, 4}));
    EXPECT_EQ(shape0(op, {{5}, {}}), (Shape{5}));
    std::string e = infer_error(op, {{2, 3}, {4}});
    EXPECT_TRUE(contains(e, "[2,3]"));
    EXPECT_TRUE(contains(e, "do not broadcast"));
  }
  EXPECT_EQ(shape0("smul", {{2, 3}, {}}), (Shape{2, 3}));
  EXPECT_TRUE(contains(infer_error("smul", {{2, 3}, {1}}), "0-d"));
  for (const char* op : {"relu", "sigmoid", "tanh", "gelu", "erf", "exp", "sqrt", "identity", "neg",
                         "nan_to_zero"}) {
    EXPECT_EQ(shape0(op, {{2, 5, 7}}), (Shape{2, 5, 7}));
    EXPECT_TRUE(contains(infer_error(op, {{2}, {2}}), "takes 1 inputs, got 2"));
  }
}

TEST(OpsShapes, ActivationsOfModernNetworks) {
  for (const char* op : {"relu6", "hardswish", "silu", "clip", "hardsigmoid", "leaky_relu"})
    EXPECT_EQ(shape0(op, {{2, 3, 4}}), (Shape{2, 3, 4})) << op;
  EXPECT_EQ(shape0("pow", {{2, 3}}, {{"exponent", 2.0}}), (Shape{2, 3}));
  EXPECT_TRUE(contains(infer_error("pow", {{2, 3}}), "exponent"));
  EXPECT_TRUE(contains(infer_error("clip", {{2, 3}}, {{"min", std::string("a")}}), "min"));
  // prelu's slope broadcasts to the input, never the other way round.
  EXPECT_EQ(shape0("prelu", {{1, 4, 5, 5}, {4, 1, 1}}), (Shape{1, 4, 5, 5}));
  EXPECT_EQ(shape0("prelu", {{1, 4, 5, 5}, {1}}), (Shape{1, 4, 5, 5}));
  EXPECT_TRUE(contains(infer_error("prelu", {{4, 1, 1}, {1, 4, 5, 5}}), "slope"));
  EXPECT_TRUE(contains(infer_error("prelu", {{1, 4, 5, 5}, {3, 1, 1}}), "broadcast"));
}

TEST(OpsShapes, Indexing) {
  EXPECT_EQ(shape0("expand", {{3, 1}}, {{"shape", Ints{2, 1, 4}}}), (Shape{2, 3, 4}));
  EXPECT_EQ(shape0("expand", {{3, 4}}, {{"shape", Ints{1}}}), (Shape{3, 4}));
  EXPECT_TRUE(contains(infer_error("expand", {{3, 2}}, {{"shape", Ints{4}}}), "broadcast"));
  EXPECT_TRUE(contains(infer_error("expand", {{3, 2}}, {{"shape", Ints{-1, 2}}}), "negative"));
  EXPECT_EQ(shape0("gather", {{5, 6, 7}},
                   {{"axis", 1}, {"indices", Ints{0, 5, -1, 2}}, {"indices_shape", Ints{2, 2}}}),
            (Shape{5, 2, 2, 7}));
  EXPECT_EQ(shape0("gather", {{5, 6}}, {{"indices", Ints{3}}}), (Shape{6}));  // scalar index
  EXPECT_TRUE(contains(infer_error("gather", {{5, 6}}, {{"indices", Ints{5}}}), "out of range"));
  EXPECT_TRUE(contains(infer_error("gather", {{5, 6}}, {{"indices", Ints{1, 2}}}), "2 indices"));
  Attrs r{{"sizes", Ints{8, 12}}, {"scale_h", 2.0}, {"scale_w", 2.0}};
  EXPECT_EQ(shape0("resize", {{1, 3, 4, 6}}, r), (Shape{1, 3, 8, 12}));
  EXPECT_TRUE(contains(infer_error("resize", {{3, 4, 6}}, r), "rank 4"));
  r.set("mode", std::string("cubic"));
  EXPECT_TRUE(contains(infer_error("resize", {{1, 3, 4, 6}}, r), "mode"));
}

TEST(OpsShapes, Matmul) {
  EXPECT_EQ(shape0("matmul", {{2, 3}, {3, 4}}), (Shape{2, 4}));
  EXPECT_EQ(shape0("matmul", {{5, 2, 3}, {5, 3, 4}}), (Shape{5, 2, 4}));
  EXPECT_EQ(shape0("matmul", {{6, 5, 2, 3}, {3, 4}}), (Shape{6, 5, 2, 4}));
  EXPECT_EQ(shape0("matmul", {{2, 3}, {3, 4}, {4}}, {{"act", std::string("relu")}}), (Shape{2, 4}));
  std::string e = infer_error("matmul", {{2, 3}, {5, 4}});
  EXPECT_TRUE(contains(e, "[2,3]"));
  EXPECT_TRUE(contains(e, "[5,4]"));
  EXPECT_TRUE(contains(e, "inner"));
  EXPECT_TRUE(contains(infer_error("matmul", {{5, 2, 3}, {4, 3, 4}}), "batch"));
  EXPECT_TRUE(contains(infer_error("matmul", {{2, 3}, {3, 4}, {3}}), "bias must be [4]"));
  EXPECT_TRUE(contains(infer_error("matmul", {{3}, {3, 4}}), "rank >= 2"));
  EXPECT_TRUE(contains(infer_error("matmul", {{2, 3}, {3, 4}}, {{"act", std::string("softsign")}}),
                       "'act' must be one of"));
  EXPECT_TRUE(contains(infer_error("matmul", {{2, 3}}), "takes 2 to 3 inputs, got 1"));
}

TEST(OpsShapes, Transpose) {
  EXPECT_EQ(shape0("transpose", {{2, 3, 4}}), (Shape{4, 3, 2}));
  EXPECT_EQ(shape0("transpose", {{2, 3, 4, 5}}, {{"perm", Ints{0, 2, 1, 3}}}), (Shape{2, 4, 3, 5}));
  std::string e = infer_error("transpose", {{2, 3, 4}}, {{"perm", Ints{0, 0, 1}}});
  EXPECT_TRUE(contains(e, "[0,0,1]"));
  EXPECT_TRUE(contains(e, "not a permutation"));
  EXPECT_TRUE(
      contains(infer_error("transpose", {{2, 3}}, {{"perm", Ints{0, 1, 2}}}), "not a permutation"));
}

TEST(OpsShapes, Conv) {
  Attrs same{{"pads", Ints{1, 1, 1, 1}}};
  EXPECT_EQ(shape0("conv", {{1, 4, 8, 8}, {6, 2, 3, 3}}, same), (Shape{1, 6, 8, 8}));
  EXPECT_EQ(shape0("conv", {{2, 4, 8, 8}, {6, 4, 3, 3}}, {{"stride", Ints{2, 2}}}),
            (Shape{2, 6, 3, 3}));
  EXPECT_EQ(shape0("conv", {{1, 3, 9, 8}, {5, 3, 3, 3}},
                   {{"stride", Ints{2, 1}}, {"pads", Ints{1, 0, 1, 0}}}),
            (Shape{1, 5, 5, 6}));
  EXPECT_EQ(shape0("conv", {{1, 2, 8, 8}, {2, 2, 3, 3}}, {{"dilations", Ints{2, 2}}}),
            (Shape{1, 2, 4, 4}));
  EXPECT_EQ(shape0("conv", {{1, 2, 5, 5}, {3, 2, 1, 1}, {3}}), (Shape{1, 3, 5, 5}));
  std::string e = infer_error("conv", {{1, 6, 8, 8}, {8, 4, 3, 3}});
  EXPECT_TRUE(contains(e, "[1,6,8,8]"));
  EXPECT_TRUE(contains(e, "[8,4,3,3]"));
  EXPECT_TRUE(contains(e, "not a multiple"));
  EXPECT_TRUE(contains(infer_error("conv", {{1, 4, 8, 8}, {3, 2, 3, 3}}), "2 groups"));
  EXPECT_TRUE(contains(infer_error("conv", {{1, 2, 2, 2}, {3, 2, 3, 3}}), "does not fit"));
  EXPECT_TRUE(contains(infer_error("conv", {{1, 2, 8, 8}, {3, 2, 3, 3}}, {{"stride", Ints{1}}}),
                       "'stride' must have 2 values"));
  EXPECT_TRUE(contains(infer_error("conv", {{1, 2, 8, 8}, {3, 2, 3, 3}}, {{"stride", Ints{0, 1}}}),
                       ">= 1"));
  EXPECT_TRUE(contains(
      infer_error("conv", {{1, 2, 8, 8}, {3, 2, 3, 3}}, {{"pads", Ints{-1, 0, 0, 0}}}), "'pads'"));
  EXPECT_TRUE(contains(infer_error("conv", {{1, 2, 8, 8}, {3, 2, 3, 3}, {2}}), "bias must be [3]"));
  EXPECT_TRUE(contains(infer_error("conv", {{2, 8, 8}, {3, 2, 3, 3}}), "rank 4"));
  EXPECT_TRUE(contains(infer_error("conv", {{1, 2, 8, 8}, {3, 2, 3, 3}}, {{"groups", 2}}),
                       "no attribute 'groups'"));
}

TEST(OpsShapes, Enlarge) {
  EXPECT_EQ(shape0("enlarge", {{4, 2, 1, 1}}, {{"kernel", Ints{3, 3}}}), (Shape{4, 2, 3, 3}));
  EXPECT_EQ(shape0("enlarge", {{4, 2, 1, 3}}, {{"kernel", Ints{5, 3}}}), (Shape{4, 2, 5, 3}));
  std::string e = infer_error("enlarge", {{4, 2, 3, 3}}, {{"kernel", Ints{1, 1}}});
  EXPECT_TRUE(contains(e, "[4,2,3,3]"));
  EXPECT_TRUE(contains(e, "[1,1]"));
  EXPECT_TRUE(
      contains(infer_error("enlarge", {{4, 2, 1, 1}}, {{"kernel", Ints{2, 2}}}), "even amount"));
  EXPECT_TRUE(contains(infer_error("enlarge", {{4, 2, 1, 1}}), "needs attribute 'kernel'"));
}

TEST(OpsShapes, Pools) {
  Attrs a{{"kernel", Ints{3, 3}}, {"stride", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  for (const char* op : {"poolavg", "poolmax"}) {
    EXPECT_EQ(shape0(op, {{1, 2, 5, 5}}, a), (Shape{1, 2, 3, 3}));
    EXPECT_EQ(shape0(op, {{1, 2, 6, 4}}, {{"kernel", Ints{2, 2}}, {"stride", Ints{2, 2}}}),
              (Shape{1, 2, 3, 2}));
    EXPECT_EQ(shape0(op, {{1, 2, 6, 4}}, {{"kernel", Ints{3, 1}}}), (Shape{1, 2, 4, 4}));
    std::string e =
        infer_error(op, {{1, 2, 5, 5}}, {{"kernel", Ints{2, 2}}, {"pads", Ints{2, 0, 0, 0}}});
    EXPECT_TRUE(contains(e, "[2,0,0,0]"));
    EXPECT_TRUE(contains(e, "smaller than the kernel"));
    EXPECT_TRUE(contains(infer_error(op, {{2, 5, 5}}, {{"kernel", Ints{2, 2}}}), "rank 4"));
    EXPECT_TRUE(
        contains(infer_error(op, {{1, 1, 2, 2}}, {{"kernel", Ints{3, 3}}}), "does not fit"));
  }
  EXPECT_EQ(infer("poolavg", {{1, 2, 5, 5}}, {{"kernel", Ints{3, 3}}}).size(), 1u);
  EXPECT_TRUE(contains(
      infer_error("poolmax", {{1, 2, 5, 5}}, {{"kernel", Ints{3, 3}}, {"count_include_pad", 0}}),
      "no attribute 'count_include_pad'"));
  EXPECT_EQ(shape0("global_avgpool", {{2, 3, 5, 7}}), (Shape{2, 3, 1, 1}));
  EXPECT_TRUE(contains(infer_error("global_avgpool", {{2, 3, 5}}), "[2,3,5]"));
}

TEST(OpsShapes, ConcatRecordsSplitTree) {
  auto t = infer("concat", std::vector<Shape>{{2, 3}, {2, 5}}, {{"axis", 1}}).at(0);
  EXPECT_EQ(t.shape, (Shape{2, 8}));
  ASSERT_TRUE(t.split(1));
  EXPECT_EQ(t.split(1)->cut, 3);
  EXPECT_FALSE(t.split(0));
  EXPECT_EQ(t.str(), "f32[2,8]{split1:3}");
  // Negative axis; three parts nest to the right.
  auto t3 = infer("concat", std::vector<Shape>{{1, 2}, {3, 2}, {4, 2}}, {{"axis", -2}}).at(0);
  EXPECT_EQ(t3.shape, (Shape{8, 2}));
  EXPECT_EQ(split_tree_str(t3.split(0)), "( 1 3)");
  // Nested concat keeps each part's own tree below the new cut.
  auto inner = infer("concat", std::vector<Shape>{{2, 1}, {2, 2}}, {{"axis", 1}}).at(0);
  auto outer = infer("concat", std::vector<TensorType>{inner, f32({2, 4})}, {{"axis", 1}}).at(0);
  EXPECT_EQ(split_tree_str(outer.split(1)), "(1 3 )");
  // Other axes keep a tree only where all parts agree.
  auto rows = infer("concat", std::vector<Shape>{{1, 3}, {1, 3}}, {{"axis", 0}}).at(0);
  auto both = infer("concat", std::vector<TensorType>{rows, rows}, {{"axis", 1}}).at(0);
  EXPECT_TRUE(both.split(0));
  auto mixed = infer("concat", std::vector<TensorType>{rows, f32({2, 3})}, {{"axis", 1}}).at(0);
  EXPECT_FALSE(mixed.split(0));
  std::string e = infer_error("concat", {{2, 3}, {3, 3}}, {{"axis", 1}});
  EXPECT_TRUE(contains(e, "[3,3]"));
  EXPECT_TRUE(contains(e, "[2,3]"));
  EXPECT_TRUE(contains(infer_error("concat", {{2, 3}, {2, 3, 1}}, {{"axis", 0}}), "[2,3,1]"));
  EXPECT_TRUE(contains(infer_error("concat", {{2, 3}}, {{"axis", 2}}), "axis 2 out of range"));
  EXPECT_TRUE(contains(infer_error("concat", {}, {{"axis", 0}}), "at least 1"));
  EXPECT_TRUE(contains(infer_error("concat", {{2, 3}, {2, 3}}), "needs attribute 'axis'"));
}

TEST(OpsShapes, SplitUsesRecordedCutAndPropagatesSubtrees) {
  auto inner = infer("concat", std::vector<Shape>{{2, 1}, {2, 2}}, {{"axis", 1}}).at(0);
  auto joined = infer("concat", std::vector<TensorType>{inner, f32({2, 4})}, {{"axis", 1}}).at(0);
  auto parts = infer("split", std::vector<TensorType>{joined}, {{"axis", 1}});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], inner);  // shape [2,3] with its own cut at 1
  EXPECT_EQ(parts[1], f32({2, 4}));
  auto again = infer("split", std::vector<TensorType>{parts[0]}, {{"axis", -1}});
  EXPECT_EQ(again[0].shape, (Shape{2, 1}));
  EXPECT_EQ(again[1].shape, (Shape{2, 2}));
  // Explicit sizes: parts lining up with the tree get subtrees, straddling parts none.
  auto three =
      infer("split", std::vector<TensorType>{joined}, {{"axis", 1}, {"sizes", Ints{1, 2, 4}}});
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[2].shape, (Shape{2, 4}));
  for (auto& t : three) EXPECT_FALSE(t.has_splits());
  auto straddle =
      infer("split", std::vector<TensorType>{joined}, {{"axis", 1}, {"sizes", Ints{2, 5}}});
  EXPECT_FALSE(straddle[0].has_splits());
  // Other axes keep their trees.
  auto rows = infer("concat", std::vector<Shape>{{1, 4}, {2, 4}}, {{"axis", 0}}).at(0);
  auto cols = infer("split", std::vector<TensorType>{rows}, {{"axis", 1}, {"sizes", Ints{1, 3}}});
  EXPECT_EQ(cols[1].str(), "f32[3,3]{split0:1}");

  std::string e = infer_error("split", {{2, 6}}, {{"axis", 1}});
  EXPECT_TRUE(contains(e, "f32[2,6]"));
  EXPECT_TRUE(contains(e, "no recorded split point"));
  e = infer_error("split", {{2, 6}}, {{"axis", 1}, {"sizes", Ints{2, 3}}});
  EXPECT_TRUE(contains(e, "[2,3] add up to 5"));
  EXPECT_TRUE(contains(e, "[2,6]"));
  EXPECT_TRUE(contains(infer_error("split", {{2, 6}}, {{"axis", 1}, {"sizes", Ints{6}}}),
                       "at least 2 parts"));
  // Sizes whose sum would overflow int64 are refused before they are added.
  e = infer_error("split", {{2, 6}},
                  {{"axis", 1}, {"sizes", Ints{int64_t{1} << 62, int64_t{1} << 62, 3}}});
  EXPECT_TRUE(contains(e, "add up to more than axis 1"));
  EXPECT_TRUE(
      contains(infer_error("split", {{2, 6}}, {{"axis", 1}, {"sizes", Ints{7, -1}}}), "positive"));
}

TEST(OpsShapes, ReshapeAndFlatten) {
  EXPECT_EQ(shape0("reshape", {{2, 3, 4}}, {{"shape", Ints{0, -1}}}), (Shape{2, 12}));
  EXPECT_EQ(shape0("reshape", {{2, 3, 4}}, {{"shape", Ints{4, 3, 2}}}), (Shape{4, 3, 2}));
  EXPECT_EQ(shape0("reshape", {{2, 3, 4}}, {{"shape", Ints{-1}}}), (Shape{24}));
  EXPECT_TRUE(
      contains(infer_error("reshape", {{2, 3, 4}}, {{"shape", Ints{-1, -1}}}), "more than one -1"));
  std::string e = infer_error("reshape", {{2, 3, 4}}, {{"shape", Ints{5, 5}}});
  EXPECT_TRUE(contains(e, "[2,3,4]"));
  EXPECT_TRUE(contains(e, "[5,5]"));
  EXPECT_TRUE(
      contains(infer_error("reshape", {{2, 3, 4}}, {{"shape", Ints{5, -1}}}), "cannot infer"));
  EXPECT_TRUE(contains(infer_error("reshape", {{24}}, {{"shape", Ints{0, 0}}}), "rank 1"));
  EXPECT_TRUE(contains(infer_error("reshape", {{24}}, {{"shape", Ints{-2, -12}}}), "negative"));
  // A concat on axis 0 survives a reshape that keeps axis 0.
  auto rows = infer("concat", std::vector<Shape>{{1, 2, 3}, {2, 2, 3}}, {{"axis", 0}}).at(0);
  EXPECT_TRUE(infer("reshape", std::vector<TensorType>{rows}, {{"shape", Ints{3, 6}}})[0].split(0));
  EXPECT_FALSE(
      infer("reshape", std::vector<TensorType>{rows}, {{"shape", Ints{18}}})[0].has_splits());

  EXPECT_EQ(shape0("flatten", {{2, 3, 4, 5}}), (Shape{2, 60}));
  EXPECT_EQ(shape0("flatten", {{2, 3, 4, 5}}, {{"axis", 2}}), (Shape{6, 20}));
  EXPECT_EQ(shape0("flatten", {{2, 3, 4, 5}}, {{"axis", 0}}), (Shape{1, 120}));
  EXPECT_EQ(shape0("flatten", {{2, 3, 4, 5}}, {{"axis", -1}}), (Shape{24, 5}));
  EXPECT_EQ(shape0("flatten", {{2, 3}}, {{"axis", 2}}), (Shape{6, 1}));
  EXPECT_TRUE(contains(infer_error("flatten", {{2, 3}}, {{"axis", 3}}), "axis 3 out of range"));
}

TEST(OpsShapes, PadAndSlice) {
  EXPECT_EQ(shape0("pad", {{2, 3}}, {{"pads", Ints{1, 0, 0, 2}}}), (Shape{3, 5}));
  EXPECT_EQ(shape0("pad", {{2, 3}}, {{"pads", Ints{0, -1, 0, 0}}, {"value", 1.5}}), (Shape{2, 2}));
  std::string e = infer_error("pad", {{2, 3}}, {{"pads", Ints{1, 1}}});
  EXPECT_TRUE(contains(e, "[1,1]"));
  EXPECT_TRUE(contains(e, "2*rank = 4"));
  EXPECT_TRUE(contains(infer_error("pad", {{2, 3}}, {{"pads", Ints{0, -2, 0, -1}}}),
                       "leave axis 1 of [2,3] empty"));
  EXPECT_TRUE(contains(
      infer_error("pad", {{2, 3}}, {{"pads", Ints{0, 0, 0, 0}}, {"value", std::string("x")}}),
      "'value' must be float"));
  // Found by fuzzing: pads near the int64 limits overflowed the padded size.
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(contains(infer_error("pad", {{2, 3}}, {{"pads", Ints{0, big, 0, 0}}}),
                       "overflow axis 1 of [2,3]"));
  EXPECT_TRUE(contains(infer_error("pad", {{2, 3}}, {{"pads", Ints{0, 2, 0, big - 3}}}),
                       "overflow axis 1 of [2,3]"));
  EXPECT_TRUE(contains(infer_error("pad", {{2, 3}}, {{"pads", Ints{-big, 0, -big, 0}}}),
                       "overflow axis 0 of [2,3]"));

  EXPECT_EQ(
      shape0("slice", {{10, 8}}, {{"starts", Ints{2}}, {"ends", Ints{-1}}, {"axes", Ints{0}}}),
      (Shape{7, 8}));
  EXPECT_EQ(shape0("slice", {{10, 8}},
                   {{"starts", Ints{1, 1}}, {"ends", Ints{100, 8}}, {"steps", Ints{3, 2}}}),
            (Shape{3, 4}));
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(
      shape0("slice", {{10, 8}},
             {{"starts", Ints{-1}}, {"ends", Ints{lo}}, {"axes", Ints{-2}}, {"steps", Ints{-1}}}),
      (Shape{10, 8}));
  EXPECT_EQ(
      shape0("slice", {{10, 8}}, {{"starts", Ints{0}}, {"ends", Ints{hi}}, {"axes", Ints{1}}}),
      (Shape{10, 8}));
  EXPECT_EQ(
      shape0("slice", {{10, 8}},
             {{"starts", Ints{7}}, {"ends", Ints{2}}, {"axes", Ints{1}}, {"steps", Ints{-2}}}),
      (Shape{10, 3}));
  e = infer_error("slice", {{10, 8}}, {{"starts", Ints{5}}, {"ends", Ints{2}}, {"axes", Ints{1}}});
  EXPECT_TRUE(contains(e, "[10,8]"));
  EXPECT_TRUE(contains(e, "empty"));
  EXPECT_TRUE(contains(infer_error("slice", {{10, 8}}, {{"starts", Ints{0, 0}}, {"ends", Ints{1}}}),
                       "differ in length"));
  EXPECT_TRUE(contains(
      infer_error("slice", {{10, 8}}, {{"starts", Ints{0}}, {"ends", Ints{1}}, {"steps", Ints{0}}}),
      "steps [0]"));
  EXPECT_TRUE(
      contains(infer_error("slice", {{10, 8}},
                           {{"starts", Ints{0, 0}}, {"ends", Ints{1, 1}}, {"axes", Ints{1, -1}}}),
               "given twice"));
  EXPECT_TRUE(contains(
      infer_error("slice", {{10, 8}}, {{"starts", Ints{0}}, {"ends", Ints{1}}, {"axes", Ints{2}}}),
      "out of range"));
  // A slice that is exactly one part of a concat gets that part's tree.
  auto inner = infer("concat", std::vector<Shape>{{1, 2}, {1, 3}}, {{"axis", 1}}).at(0);
  auto joined = infer("concat", std::vector<TensorType>{f32({1, 4}), inner}, {{"axis", 1}}).at(0);
  auto part = infer("slice", std::vector<TensorType>{joined},
                    {{"starts", Ints{4}}, {"ends", Ints{9}}, {"axes", Ints{1}}})[0];
  EXPECT_EQ(part, inner);
}

TEST(OpsShapes, Normalisations) {
  EXPECT_EQ(shape0("batchnorm", {{1, 3, 4, 4}, {3}, {3}, {3}, {3}}), (Shape{1, 3, 4, 4}));
  EXPECT_EQ(shape0("batchnorm", {{2, 3}, {3}, {3}, {3}, {3}}), (Shape{2, 3}));
  std::string e = infer_error("batchnorm", {{1, 3, 4, 4}, {3}, {3}, {3}, {4}});
  EXPECT_TRUE(contains(e, "var must be [3]"));
  EXPECT_TRUE(contains(e, "[1,3,4,4]"));
  EXPECT_TRUE(contains(infer_error("batchnorm", {{1, 3, 4, 4}, {3}, {3}, {3}}), "takes 5 inputs"));
  EXPECT_TRUE(contains(infer_error("batchnorm", {{3}, {3}, {3}, {3}, {3}}), "rank >= 2"));

  EXPECT_EQ(shape0("softmax", {{2, 5}}), (Shape{2, 5}));
  EXPECT_EQ(shape0("softmax", {{2, 5, 3}}, {{"axis", 1}}), (Shape{2, 5, 3}));
  EXPECT_TRUE(contains(infer_error("softmax", {{2, 5}}, {{"axis", -3}}),
                       "axis -3 out of range for rank 2"));

  EXPECT_EQ(shape0("layernorm", {{2, 3, 4}, {4}}), (Shape{2, 3, 4}));
  EXPECT_EQ(shape0("layernorm", {{2, 3, 4}, {3, 4}, {3, 4}}, {{"axis", 1}}), (Shape{2, 3, 4}));
  e = infer_error("layernorm", {{2, 3, 4}, {3}});
  EXPECT_TRUE(contains(e, "scale must be [4]"));
  EXPECT_TRUE(contains(e, "[2,3,4]"));
  EXPECT_TRUE(contains(infer_error("layernorm", {{2, 3, 4}, {4}, {3}}), "bias must be [4]"));

  EXPECT_EQ(shape0("reduce_mean", {{2, 3, 4}}, {{"axes", Ints{1}}}), (Shape{2, 1, 4}));
  EXPECT_EQ(shape0("reduce_mean", {{2, 3, 4}}, {{"axes", Ints{-1, 0}}, {"keepdims", 0}}),
            (Shape{3}));
  EXPECT_EQ(shape0("reduce_mean", {{2, 3, 4}}), (Shape{1, 1, 1}));
  EXPECT_EQ(shape0("reduce_sum", {{2, 3, 4}}, {{"axes", Ints{2}}, {"keepdims", 0}}), (Shape{2, 3}));
  EXPECT_EQ(shape0("reduce_mean", {{2, 3, 4}}, {{"keepdims", 0}}), (Shape{}));
  EXPECT_TRUE(
      contains(infer_error("reduce_mean", {{2, 3, 4}}, {{"axes", Ints{1, -2}}}), "given twice"));
  EXPECT_TRUE(contains(infer_error("reduce_mean", {{2, 3, 4}}, {{"axes", Ints{3}}}),
                       "axis 3 out of range"));
}

// Split points through the other operators, as docs/operators.md specifies.
TEST(OpsShapes, SplitTreePropagation) {
  auto rows = infer("concat", std::vector<Shape>{{1, 4}, {2, 4}}, {{"axis", 0}}).at(0);
  auto cols = infer("concat", std::vector<Shape>{{4, 1}, {4, 3}}, {{"axis", 1}}).at(0);
  // Unary keeps, binary keeps only where both agree.
  EXPECT_EQ(infer("relu", std::vector<TensorType>{rows})[0], rows);
  EXPECT_TRUE(infer("ewadd", std::vector<TensorType>{rows, rows})[0].split(0));
  EXPECT_FALSE(infer("ewadd", std::vector<TensorType>{rows, f32({3, 4})})[0].has_splits());
  // matmul: rows from x, columns from y's last axis.
  auto mm = infer("matmul", std::vector<TensorType>{rows, cols})[0];
  EXPECT_EQ(mm.str(), "f32[3,4]{split0:1}{split1:1}");
  // transpose permutes the trees.
  EXPECT_EQ(infer("transpose", std::vector<TensorType>{rows})[0].str(), "f32[4,3]{split1:1}");
  // conv: batch tree of x, channel tree from w's axis 0.
  auto x = infer("concat", std::vector<Shape>{{1, 2, 5, 5}, {1, 2, 5, 5}}, {{"axis", 0}}).at(0);
  auto w = infer("concat", std::vector<Shape>{{3, 2, 3, 3}, {1, 2, 3, 3}}, {{"axis", 0}}).at(0);
  EXPECT_EQ(infer("conv", std::vector<TensorType>{x, w})[0].str(),
            "f32[2,4,3,3]{split0:1}{split1:3}");
  auto xc = infer("concat", std::vector<Shape>{{1, 1, 5, 5}, {1, 1, 5, 5}}, {{"axis", 1}}).at(0);
  Attrs pool{{"kernel", Ints{3, 3}}};
  EXPECT_EQ(infer("poolavg", std::vector<TensorType>{xc}, pool)[0].str(), "f32[1,2,3,3]{split1:1}");
  EXPECT_EQ(infer("softmax", std::vector<TensorType>{rows}, {{"axis", 0}})[0].has_splits(), false);
  EXPECT_EQ(infer("softmax", std::vector<TensorType>{rows}, {{"axis", 1}})[0], rows);
}

TEST(OpsShapes, AttributeKindsAndNamesAreChecked) {
  EXPECT_TRUE(contains(infer_error("concat", {{2}}, {{"axis", std::string("x")}}),
                       "attribute 'axis' must be int, got string x"));
  EXPECT_TRUE(contains(infer_error("transpose", {{2, 3}}, {{"perm", 1}}), "'perm' must be ints"));
  EXPECT_TRUE(
      contains(infer_error("relu", {{2}}, {{"alpha", 1.0}}), "relu has no attribute 'alpha'"));
  // Messages carry the operator and the input types.
  std::string e = infer_error("conv", {{1, 6, 8, 8}, {8, 4, 3, 3}});
  EXPECT_TRUE(contains(e, "conv (inputs f32[1,6,8,8], f32[8,4,3,3])"));
  // An int given for a float attribute is accepted as a float.
  Graph g;
  auto x = g.add_input("x", f32({2, 3}));
  auto bn = g.add("layernorm", {{x, 0}, {g.add_input("s", f32({3})), 0}}, {{"epsilon", 1}});
  EXPECT_EQ(g.node(bn).attrs.f("epsilon"), 1.0);
}

}  // namespace
}  // namespace graphsub
