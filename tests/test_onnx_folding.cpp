// Shape computations evaluated at import: the evaluator's integer semantics (as ONNX Runtime
// computes them), PyTorch's Shape -> Gather -> Concat chains giving constant parameters, the
// summary grouped by op type, and --input-shape names checked against the model's inputs.
#include <gtest/gtest.h>

#include "core/error.h"
#include "onnx/evaluate/shape_evaluator.h"
#include "onnx/onnx_model.h"
#include "test_onnx_support.h"

namespace graphsub {
namespace {

using onnx::TensorProto;
using testing::OnnxBuilder;

HostConstant ints(Shape dims, std::vector<int64_t> v, int32_t type = TensorProto::INT64) {
  HostConstant c;
  c.elem_type = type;
  c.dims = std::move(dims);
  c.ints = std::move(v);
  return c;
}

HostConstant reals(Shape dims, std::vector<double> v) {
  HostConstant c;
  c.elem_type = TensorProto::FLOAT;
  c.dims = std::move(dims);
  c.reals = std::move(v);
  return c;
}

onnx::NodeProto node(const std::string& op, int inputs) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name("n");
  for (int i = 0; i < inputs; ++i) n.add_input(fmt::format("i{}", i));
  n.add_output("o");
  return n;
}

HostConstant fold1(const onnx::NodeProto& n, std::vector<const HostConstant*> in,
                   int64_t opset = 13) {
  auto r = fold_node(n, in, opset);
  if (!r) throw std::runtime_error(n.op_type() + " was not evaluated");
  return r->at(0);
}

TEST(ImportFolding, IntegerDivisionTruncatesAndModTakesTheDivisorsSign) {
  HostConstant a = ints({4}, {7, -7, 7, -7}), b = ints({4}, {2, 2, -2, -2});
  EXPECT_EQ(fold1(node("Div", 2), {&a, &b}).ints, (std::vector<int64_t>{3, -3, -3, 3}));
  EXPECT_EQ(fold1(node("Mod", 2), {&a, &b}).ints, (std::vector<int64_t>{1, 1, -1, -1}));
  auto fmod = node("Mod", 2);
  OnnxBuilder::attr(fmod, "fmod", int64_t{1});
  EXPECT_EQ(fold1(fmod, {&a, &b}).ints, (std::vector<int64_t>{1, -1, 1, -1}));
  HostConstant zero = ints({}, {0});
  EXPECT_THROW(fold1(node("Div", 2), {&a, &zero}), Error);
}

TEST(ImportFolding, BroadcastArithmeticStaysExactBeyondDoublePrecision) {
  // Slice ends of INT64_MAX are common in exports: a double would round them.
  HostConstant big = ints({1}, {(int64_t{1} << 62) + 1}), two = ints({}, {2});
  EXPECT_EQ(fold1(node("Sub", 2), {&big, &two}).ints[0], (int64_t{1} << 62) - 1);
  HostConstant col = ints({2, 1}, {1, 2}), row = ints({3}, {10, 20, 30});
  HostConstant sum = fold1(node("Add", 2), {&col, &row});
  EXPECT_EQ(sum.dims, (Shape{2, 3}));
  EXPECT_EQ(sum.ints, (std::vector<int64_t>{11, 21, 31, 12, 22, 32}));
  HostConstant huge = ints({}, {std::numeric_limits<int64_t>::max()});
  EXPECT_FALSE(fold_node(node("Mul", 2), {&huge, &two}, 13)) << "overflow is not evaluated";
}

TEST(ImportFolding, GatherSliceAndConcatFollowOnnx) {
  HostConstant shape = ints({4}, {1, 3, 8, 6}), last = ints({}, {-1});
  HostConstant g = fold1(node("Gather", 2), {&shape, &last});
  EXPECT_TRUE(g.dims.empty());
  EXPECT_EQ(g.ints, (std::vector<int64_t>{6}));
  HostConstant out_of_range = ints({}, {4});
  EXPECT_THROW(fold1(node("Gather", 2), {&shape, &out_of_range}), Error);

  HostConstant starts = ints({1}, {-1}), ends = ints({1}, {std::numeric_limits<int64_t>::min()}),
               axes = ints({1}, {0}), steps = ints({1}, {-2});
  HostConstant rev = fold1(node("Slice", 5), {&shape, &starts, &ends, &axes, &steps});
  EXPECT_EQ(rev.ints, (std::vector<int64_t>{6, 3}));

  HostConstant a = ints({1}, {2}), b = ints({2}, {-1, 5});
  auto cat = node("Concat", 2);
  OnnxBuilder::attr(cat, "axis", int64_t{0});
  EXPECT_EQ(fold1(cat, {&a, &b}).ints, (std::vector<int64_t>{2, -1, 5}));
}

TEST(ImportFolding, RangeConstantOfShapeWhereAndReduceProd) {
  HostConstant s = ints({}, {10}), l = ints({}, {1}), d = ints({}, {-4});
  EXPECT_EQ(fold1(node("Range", 3), {&s, &l, &d}).ints, (std::vector<int64_t>{10, 6, 2}));

  HostConstant dims = ints({2}, {2, 3});
  auto cos = node("ConstantOfShape", 1);
  auto* a = cos.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(TensorProto::INT64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(1);
  HostConstant ones = fold1(cos, {&dims});
  EXPECT_EQ(ones.dims, (Shape{2, 3}));
  EXPECT_EQ(ones.ints, std::vector<int64_t>(6, 1));

  // Expand's "-1 means keep" as PyTorch writes it: Where(Equal(shape, -1), 1, shape).
  HostConstant shape = ints({3}, {4, -1, -1}), minus = ints({}, {-1}), one = ints({}, {1});
  HostConstant eq = fold1(node("Equal", 2), {&shape, &minus});
  EXPECT_EQ(eq.elem_type, TensorProto::BOOL);
  EXPECT_EQ(fold1(node("Where", 3), {&eq, &one, &shape}).ints, (std::vector<int64_t>{4, 1, 1}));

  auto prod = node("ReduceProd", 1);
  OnnxBuilder::attr(prod, "keepdims", int64_t{0});
  HostConstant p = fold1(prod, {&dims});
  EXPECT_TRUE(p.dims.empty());
  EXPECT_EQ(p.ints, (std::vector<int64_t>{6}));
}

TEST(ImportFolding, CastRoundsLikeTheTargetType) {
  HostConstant x = reals({3}, {2.9, -2.9, 1e10});
  auto to_int = node("Cast", 1);
  OnnxBuilder::attr(to_int, "to", int64_t{TensorProto::INT64});
  EXPECT_EQ(fold1(to_int, {&x}).ints, (std::vector<int64_t>{2, -2, 10000000000}));
  auto to_i32 = node("Cast", 1);
  OnnxBuilder::attr(to_i32, "to", int64_t{TensorProto::INT32});
  EXPECT_EQ(fold1(to_i32, {&x}).ints[2], static_cast<int32_t>(int64_t{10000000000}));
  HostConstant i = ints({1}, {16777217});
  auto to_float = node("Cast", 1);
  OnnxBuilder::attr(to_float, "to", int64_t{TensorProto::FLOAT});
  EXPECT_EQ(fold1(to_float, {&i}).reals[0], 16777216.0);  // float has 24 bits of mantissa
}

// PyTorch's flatten and channel-split chains: the Reshape target and the Slice ends are
// computed from Shape at run time; imported, both are constants and nothing stays opaque.
TEST(ImportFolding, PyTorchShapeChainsGiveConstantParameters) {
  OnnxBuilder b(13);
  b.input("x", {2, 6, 3, 4});
  b.node("Shape", {"x"}, {"shape"});
  b.init_ints("zero", {0});
  b.init_ints("one", {1});
  b.init_ints("two", {2});
  auto& g0 = b.node("Gather", {"shape", "zero"}, {"batch"});
  OnnxBuilder::attr(g0, "axis", int64_t{0});
  b.node("Gather", {"shape", "one"}, {"channels"});
  b.node("Div", {"channels", "two"}, {"half"});  // Slice end = C / 2
  b.node("Slice", {"x", "zero", "half", "one"}, {"first"});
  b.init_ints("minus", {-1});
  auto& cat = b.node("Concat", {"batch", "minus"}, {"target"});
  OnnxBuilder::attr(cat, "axis", int64_t{0});
  b.node("Reshape", {"first", "target"}, {"y"});
  b.output("y", {2, 36});
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  EXPECT_TRUE(m.summary.opaque.empty()) << m.summary.opaque[0].op_type;
  EXPECT_EQ(m.summary.folded, 5);  // Shape, 2 x Gather, Div, Concat
  EXPECT_EQ(m.graph.type(m.graph.outputs()[0].ref).shape, (Shape{2, 36}));
  auto ops = testing::op_counts(m.graph);
  EXPECT_EQ(ops, (std::map<std::string, int>{{"reshape", 1}, {"slice", 1}}));
}

// Swin's shifted-window mask: ScatterND on a constant, and Pad, are evaluated at import.
TEST(ImportFolding, ScatterNdAndPadFollowOnnx) {
  HostConstant data = reals({3, 2}, {0, 0, 0, 0, 0, 0}), idx = ints({2, 1}, {2, -3}),
               upd = reals({2, 2}, {5, 6, 7, 8});
  HostConstant sc = fold1(node("ScatterND", 3), {&data, &idx, &upd});
  EXPECT_EQ(sc.dims, (Shape{3, 2}));
  EXPECT_EQ(sc.reals, (std::vector<double>{7, 8, 0, 0, 5, 6}));
  HostConstant cell = ints({1, 2}, {1, 1}), one = reals({1}, {9});
  EXPECT_EQ(fold1(node("ScatterND", 3), {&data, &cell, &one}).reals,
            (std::vector<double>{0, 0, 0, 9, 0, 0}));
  HostConstant far = ints({1, 1}, {3});
  EXPECT_THROW(fold1(node("ScatterND", 3), {&data, &far, &one}), Error);
  auto add = node("ScatterND", 3);
  OnnxBuilder::attr(add, "reduction", std::string("add"));
  EXPECT_FALSE(fold_node(add, {&data, &idx, &upd}, 18)) << "reductions are not evaluated";

  HostConstant x = ints({2, 2}, {1, 2, 3, 4}), pads = ints({4}, {0, 1, 1, -1}),
               value = ints({}, {-5});
  HostConstant p = fold1(node("Pad", 3), {&x, &pads, &value});
  EXPECT_EQ(p.dims, (Shape{3, 2}));
  EXPECT_EQ(p.ints, (std::vector<int64_t>{-5, 1, -5, 3, -5, -5}));
  HostConstant axes = ints({1}, {1}), two = ints({2}, {2, 0});
  HostConstant q = fold1(node("Pad", 4), {&x, &two, nullptr, &axes}, 18);
  EXPECT_EQ(q.dims, (Shape{2, 4}));
  EXPECT_EQ(q.ints, (std::vector<int64_t>{0, 0, 1, 2, 0, 0, 3, 4}));
}

// x + 0, x - 0, x * 1 and x / 1 with constants, and Pads by 0, are removed at import (as
// randomly initialized exports are full of them); a broadcast that widens x is kept.
TEST(ImportFolding, NeutralConstantsAndZeroPadsAreRemoved) {
  OnnxBuilder b(13);
  b.input("x", {2, 3, 4});
  b.init_floats("zeros", {0, 0, 0, 0});
  b.init_floats("ones", {1}, Shape{1, 1});
  b.init_floats("wide", {0, 0}, Shape{2, 1, 1, 1});
  b.init_floats("half", {0.5f, 0, 0, 0});
  b.init_ints("nopad", {0, 0, 0, 0, 0, 0});
  b.node("Add", {"zeros", "x"}, {"a"});
  b.node("Sub", {"a", "zeros"}, {"s"});
  b.node("Mul", {"s", "ones"}, {"m"});
  b.node("Div", {"m", "ones"}, {"d"});
  b.node("Pad", {"d", "nopad"}, {"p"});
  b.node("Add", {"p", "half"}, {"kept"});  // not all zeros
  b.node("Add", {"kept", "wide"}, {"y"});  // widens x to 4 dimensions
  b.output("y", {2, 2, 3, 4});
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  EXPECT_EQ(m.summary.no_ops, 5);
  auto ops = testing::op_counts(m.graph);
  EXPECT_EQ(ops, (std::map<std::string, int>{{"add", 2}}));
}

// A Cast to the type its input has is removed (torch's rotary embeddings write 138 in
// ModernBERT); a Cast to another type is kept, as an opaque node.
TEST(ImportFolding, CastsToTheirOwnTypeAreRemovedAndOthersKept) {
  OnnxBuilder b(13);
  b.input("x", {2, 3});
  OnnxBuilder::attr(b.node("Cast", {"x"}, {"same"}), "to", int64_t{TensorProto::FLOAT});
  OnnxBuilder::attr(b.node("Cast", {"same"}, {"wide"}), "to", int64_t{TensorProto::DOUBLE});
  OnnxBuilder::attr(b.node("Cast", {"wide"}, {"back"}), "to", int64_t{TensorProto::FLOAT});
  b.node("Relu", {"back"}, {"y"});
  b.output("y", {2, 3});
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  EXPECT_EQ(m.summary.no_ops, 1);
  auto ops = testing::op_counts(m.graph);
  EXPECT_EQ(ops.size(), 2u);  // relu and the opaque Casts
  EXPECT_EQ(ops["relu"], 1);
  ASSERT_EQ(m.summary.opaque.size(), 2u);
  EXPECT_EQ(m.summary.opaque[0].op_type, "Cast");
}

// A Slice that keeps every element of its input (timm's GhostNet writes x[:, :out] of
// exactly out channels) is removed at import; one that drops or reorders anything is kept.
TEST(ImportFolding, SlicesOfAWholeTensorAreRemovedAndOthersKept) {
  OnnxBuilder b(13);
  b.input("x", {2, 6, 4});
  auto slice = [&](const std::string& in, const std::string& out, std::vector<int64_t> starts,
                   std::vector<int64_t> ends, std::vector<int64_t> axes,
                   std::vector<int64_t> steps) {
    b.init_ints(out + "_s", starts);
    b.init_ints(out + "_e", ends);
    b.init_ints(out + "_a", axes);
    b.init_ints(out + "_p", steps);
    b.node("Slice", {in, out + "_s", out + "_e", out + "_a", out + "_p"}, {out});
  };
  slice("x", "exact", {0}, {6}, {1}, {1});                           // whole: removed
  slice("exact", "past", {-6, 0}, {INT64_MAX, 9}, {1, -1}, {1, 1});  // whole: removed
  slice("past", "stepped", {0}, {6}, {1}, {2});                      // every other: kept
  slice("stepped", "short", {0}, {3}, {2}, {1});                     // 3 of 4: kept
  slice("short", "late", {1}, {2}, {0}, {1});                        // from 1: kept
  b.output("late", {1, 3, 3});
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  EXPECT_EQ(m.summary.no_ops, 2);
  auto ops = testing::op_counts(m.graph);
  EXPECT_EQ(ops, (std::map<std::string, int>{{"slice", 3}}));

  // Slice-1 (opset 9): starts and ends as attributes.
  OnnxBuilder old(9);
  old.input("x", {2, 6});
  auto& n = old.node("Slice", {"x"}, {"y"});
  OnnxBuilder::attr(n, "starts", std::vector<int64_t>{0});
  OnnxBuilder::attr(n, "ends", std::vector<int64_t>{1000});
  OnnxBuilder::attr(n, "axes", std::vector<int64_t>{1});
  old.node("Relu", {"y"}, {"z"});
  old.output("z", {2, 6});
  ImportedModel m9 = import_onnx_bytes(old.bytes(), "");
  EXPECT_EQ(m9.summary.no_ops, 1);
  EXPECT_EQ(m9.graph.num_ops(), 1u);
}

TEST(ImportFolding, SummaryGroupsOpaqueNodesByOpType) {
  OnnxBuilder b(13);
  auto* o = b.m.add_opset_import();
  o->set_domain("com.example");
  o->set_version(1);
  b.input("x", {2, 3});
  std::string prev = "x";
  for (int i = 0; i < 3; ++i) {
    std::string out = fmt::format("m{}", i);
    b.node("Mystery", {prev}, {out}).set_domain("com.example");
    b.value_info(out, {2, 3});
    prev = out;
  }
  b.node("Other", {prev}, {"y"}).set_domain("com.example");
  b.output("y", {2, 3});
  ImportedModel m = import_onnx_bytes(b.bytes(), "");
  auto lines = opaque_summary_lines(m.summary);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "3 x com.example:Mystery: operator of domain 'com.example'");
  EXPECT_EQ(lines[1], "1 x com.example:Other: operator of domain 'com.example'");
}

TEST(ImportFolding, InputShapeNamingNoInputIsAnErrorListingTheInputs) {
  OnnxBuilder b(13);
  b.input("image", {1, 3});
  b.input("mask", {1, 3});
  b.node("Add", {"image", "mask"}, {"y"});
  b.output("y", {1, 3});
  ImportOptions opts;
  opts.input_shapes["imgae"] = {1, 3};
  try {
    import_onnx_bytes(b.bytes(), "", opts);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("'imgae'"), std::string::npos) << what;
    EXPECT_NE(what.find("image, mask"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace graphsub
