// Binding of operators to the axiom language (axiom names, parameters <-> attributes) and the
// analytic cost of each operator.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "core/error.h"
#include "driver/data_paths.h"
#include "ops/op_def.h"
#include "rules/axiom_ops.h"
#include "rules/rule_parser.h"
#include "support/op_harness.h"

namespace graphsub {
namespace {

using testutil::f32;
using Ints = std::vector<int64_t>;
using Params = std::vector<AxiomParam>;

// Attributes for parameters, normalised as Graph::add would, then read back.
Attrs to_attrs(const OpDef& op, const Params& p, const std::vector<TensorType>& in) {
  return normalize_attrs(op, op.params_to_attrs(p, in));
}
std::optional<Params> to_params(const OpDef& op, const Attrs& a,
                                const std::vector<TensorType>& in) {
  return op.attrs_to_params(normalize_attrs(op, a), in);
}

TEST(OpsAxioms, AxiomNamesResolve) {
  for (const char* name :
       {"ewadd", "ewmul", "smul", "transpose", "matmul", "conv", "enlarge", "relu", "sigmoid",
        "tanh", "poolavg", "poolmax", "concat", "cpool", "iconv", "imatmul", "iewmul"}) {
    const OpDef* op = find_op_by_axiom_name(name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_EQ(axiom_output_index(*op, name), 0u);
  }
  const OpDef* s1 = find_op_by_axiom_name("split1");
  ASSERT_NE(s1, nullptr);
  EXPECT_EQ(s1->name, "split");
  EXPECT_EQ(axiom_output_index(*s1, "split0"), 0u);
  EXPECT_EQ(axiom_output_index(*s1, "split1"), 1u);
  EXPECT_THROW(axiom_output_index(op_def("conv"), "split1"), Error);
  EXPECT_EQ(find_op_by_axiom_name("erf"), nullptr);  // an operator outside the language
}

TEST(OpsAxioms, ParameterListsMatchTheBindings) {
  for (const OpDef* op : all_ops()) {
    if (op->axiom_name.empty()) continue;
    if (op->axiom_params.empty()) continue;
    EXPECT_NE(op->params_to_attrs, nullptr) << op->name;
    EXPECT_NE(op->attrs_to_params, nullptr) << op->name;
  }
  EXPECT_EQ(op_def("conv").axiom_params, (std::vector<std::string>{"stride", "padding", "act"}));
  EXPECT_EQ(op_def("poolavg").axiom_params,
            (std::vector<std::string>{"kernel", "stride", "padding"}));
  EXPECT_EQ(op_def("matmul").axiom_params, (std::vector<std::string>{"act"}));
  EXPECT_EQ(op_def("concat").axiom_params, (std::vector<std::string>{"axis"}));
  EXPECT_EQ(op_def("split").axiom_params, (std::vector<std::string>{"axis"}));
  EXPECT_EQ(op_def("enlarge").axiom_params, (std::vector<std::string>{"kernel"}));
  EXPECT_EQ(op_def("const_pool").axiom_params, (std::vector<std::string>{"kernel"}));
  EXPECT_EQ(op_def("const_iconv").axiom_params, (std::vector<std::string>{"kernel"}));
}

TEST(OpsAxioms, ConvParameters) {
  const OpDef& conv = op_def("conv");
  std::vector<TensorType> in3{f32({1, 4, 8, 8}), f32({4, 4, 3, 3})};
  Attrs a = to_attrs(conv, {int64_t{2}, std::string("same"), std::string("relu")}, in3);
  EXPECT_EQ(a.ints("stride"), (Ints{2, 2}));
  EXPECT_EQ(a.ints("pads"), (Ints{1, 1, 1, 1}));
  EXPECT_EQ(a.s("act"), "relu");
  EXPECT_EQ(a.ints("dilations"), (Ints{1, 1}));
  auto back = to_params(conv, a, in3);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, (Params{int64_t{2}, std::string("same"), std::string("relu")}));
  Attrs v = to_attrs(conv, {int64_t{1}, std::string("valid"), std::string("none")}, in3);
  EXPECT_EQ(v.ints("pads"), (Ints{0, 0, 0, 0}));
  EXPECT_EQ((*to_params(conv, v, in3))[1], AxiomParam{std::string("valid")});
  // A 1x1 kernel without pads reads as `same` (equal to valid there), so that the enlarge
  // rule stated for `same` applies to it.
  std::vector<TensorType> in1{f32({1, 4, 8, 8}), f32({4, 4, 1, 1})};
  EXPECT_EQ((*to_params(conv, {}, in1))[1], AxiomParam{std::string("same")});
  // Outside the language: asymmetric pads, non-square stride, dilation, bias.
  EXPECT_FALSE(to_params(conv, {{"pads", Ints{1, 1, 0, 0}}}, in3));
  EXPECT_FALSE(to_params(conv, {{"stride", Ints{1, 2}}}, in3));
  EXPECT_FALSE(to_params(conv, {{"dilations", Ints{2, 2}}}, in3));
  EXPECT_FALSE(to_params(conv, {}, {f32({1, 4, 8, 8}), f32({4, 4, 3, 3}), f32({4})}));
  // `same` needs an odd kernel.
  std::vector<TensorType> even{f32({1, 4, 8, 8}), f32({4, 4, 2, 2})};
  try {
    conv.params_to_attrs(Params{int64_t{1}, std::string("same"), std::string("none")}, even);
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(testutil::contains(e.what(), "odd kernel"));
  }
  EXPECT_THROW(
      conv.params_to_attrs(Params{std::string("x"), std::string("same"), std::string("none")}, in3),
      Error);
}

// A conv or matmul with a fused activation is inside the axiom language exactly when the
// activation is in the act domain of specs/operators.axioms (hardswish and silu fuse, but only
// the built-in fusion knows them).
TEST(OpsAxioms, FusedActivationsOutsideTheActDomainLeaveTheLanguage) {
  auto axioms = rules::load_rules(driver::shipped_axioms());
  const rules::ParamDomain* dom = axioms.domain("act");
  ASSERT_NE(dom, nullptr);
  std::set<std::string> in_domain;
  for (auto& v : dom->values) in_domain.insert(rules::param_str(rules::param_value(*v)));
  std::vector<TensorType> conv_in{f32({1, 4, 8, 8}), f32({4, 4, 3, 3})};
  std::vector<TensorType> mm_in{f32({2, 4}), f32({4, 3})};
  ASSERT_FALSE(fused_activations().empty());
  for (const std::string& act : fused_activations()) {
    bool expected = in_domain.count(act) > 0;
    Attrs conv_attrs{{"pads", Ints{1, 1, 1, 1}}, {"act", act}};
    EXPECT_EQ(to_params(op_def("conv"), conv_attrs, conv_in).has_value(), expected) << act;
    EXPECT_EQ(to_params(op_def("matmul"), {{"act", act}}, mm_in).has_value(), expected) << act;
  }
  EXPECT_TRUE(in_domain.count("relu6"));
  EXPECT_FALSE(in_domain.count("hardswish"));
}

TEST(OpsAxioms, PoolParameters) {
  for (const char* name : {"poolavg", "poolmax"}) {
    const OpDef& op = op_def(name);
    std::vector<TensorType> in{f32({1, 2, 8, 8})};
    Attrs a = to_attrs(op, {int64_t{3}, int64_t{2}, std::string("same")}, in);
    EXPECT_EQ(a.ints("kernel"), (Ints{3, 3}));
    EXPECT_EQ(a.ints("stride"), (Ints{2, 2}));
    EXPECT_EQ(a.ints("pads"), (Ints{1, 1, 1, 1}));
    EXPECT_EQ(*to_params(op, a, in), (Params{int64_t{3}, int64_t{2}, std::string("same")}));
    EXPECT_FALSE(to_params(op, {{"kernel", Ints{3, 2}}}, in));
    EXPECT_FALSE(to_params(op, {{"kernel", Ints{3, 3}}, {"stride", Ints{1, 2}}}, in));
  }
  // Average pooling that excludes padding from the count is outside the language.
  EXPECT_FALSE(
      to_params(op_def("poolavg"),
                {{"kernel", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}, {"count_include_pad", 0}},
                {f32({1, 2, 8, 8})}));
}

TEST(OpsAxioms, ConcatSplitMatmulTransposeEnlargeConstants) {
  const OpDef& concat = op_def("concat");
  std::vector<TensorType> two{f32({2, 3}), f32({2, 4})};
  EXPECT_EQ(to_attrs(concat, {int64_t{1}}, two).i("axis"), 1);
  EXPECT_EQ(*to_params(concat, {{"axis", -1}}, two), (Params{int64_t{1}}));
  EXPECT_FALSE(to_params(concat, {{"axis", 1}}, {f32({2, 3}), f32({2, 3}), f32({2, 3})}));

  const OpDef& split = op_def("split");
  auto joined = testutil::infer("concat", two, {{"axis", 1}})[0];
  EXPECT_EQ(*to_params(split, {{"axis", 1}}, {joined}), (Params{int64_t{1}}));
  EXPECT_EQ(*to_params(split, {{"axis", 1}, {"sizes", Ints{3, 4}}}, {joined}),
            (Params{int64_t{1}}));
  EXPECT_FALSE(to_params(split, {{"axis", 1}, {"sizes", Ints{2, 5}}}, {joined}));

  const OpDef& mm = op_def("matmul");
  EXPECT_EQ(to_attrs(mm, {std::string("tanh")}, two).s("act"), "tanh");
  EXPECT_EQ(*to_params(mm, {}, {f32({2, 3}), f32({3, 4})}), (Params{std::string("none")}));
  EXPECT_FALSE(to_params(mm, {}, {f32({2, 3}), f32({3, 4}), f32({4})}));

  const OpDef& tr = op_def("transpose");
  EXPECT_EQ(to_params(tr, {}, {f32({2, 3})})->size(), 0u);
  EXPECT_EQ(to_params(tr, {{"perm", Ints{1, 0}}}, {f32({2, 3})})->size(), 0u);
  // More axes: (permute p x), the permutation its parameter; a 2-d identity is outside.
  EXPECT_EQ(*to_params(tr, {}, {f32({2, 3, 4})}), (Params{std::string("2_1_0")}));
  EXPECT_EQ(*to_params(tr, {{"perm", Ints{0, 2, 1, 3}}}, {f32({1, 2, 3, 4})}),
            (Params{std::string("0_2_1_3")}));
  EXPECT_EQ(tr.params_to_attrs(Params{std::string("0_2_1_3")}, {}).ints("perm"),
            (Ints{0, 2, 1, 3}));
  EXPECT_FALSE(to_params(tr, {{"perm", Ints{0, 1}}}, {f32({2, 3})}));

  // A reshape is (merge_axes a x) or (split_axis a n x), else outside the language.
  const OpDef& rs = op_def("reshape");
  EXPECT_EQ(*to_params(rs, {{"shape", Ints{2, 12}}}, {f32({2, 3, 4})}), (Params{int64_t{1}}));
  EXPECT_EQ(*to_params(rs, {{"shape", Ints{0, 0, 2, 2}}}, {f32({2, 3, 4})}),
            (Params{int64_t{2}, int64_t{2}}));
  EXPECT_EQ(*to_params(rs, {{"shape", Ints{2, 3, 4, 1}}}, {f32({2, 3, 4})}),
            (Params{int64_t{2}, int64_t{4}}));  // 4 parts of one
  EXPECT_FALSE(to_params(rs, {{"shape", Ints{4, 6}}}, {f32({2, 3, 4})}));
  EXPECT_FALSE(to_params(rs, {{"shape", Ints{3, 2, 4}}}, {f32({2, 3, 4})}));
  const std::vector<TensorType> x234{f32({2, 3, 4})};
  EXPECT_EQ(rs.params_to_attrs(Params{int64_t{2}, int64_t{2}}, x234).ints("shape"),
            (Ints{2, 3, 2, 2}));
  EXPECT_EQ(rs.params_to_attrs(Params{int64_t{0}}, x234).ints("shape"), (Ints{6, 4}));

  for (const char* name : {"enlarge", "const_pool", "const_iconv"}) {
    const OpDef& op = op_def(name);
    EXPECT_EQ(op.params_to_attrs(Params{int64_t{3}}, {}).ints("kernel"), (Ints{3, 3})) << name;
    EXPECT_EQ(*op.attrs_to_params({{"kernel", Ints{5, 5}}, {"channels", 2}}, {}),
              (Params{int64_t{5}}));
    EXPECT_FALSE(op.attrs_to_params({{"kernel", Ints{5, 3}}, {"channels", 2}}, {}));
  }
}

// The float attributes of clip, hardsigmoid, leaky_relu and pow are one parameter that spells
// them exactly and reads back to the same floats.
TEST(OpsAxioms, FloatAttributesAreSpelledExactly) {
  std::vector<TensorType> x{f32({2, 3})};
  const OpDef& clip = op_def("clip");
  EXPECT_EQ(*to_params(clip, {{"min", -1.0}, {"max", 1.0}}, x), (Params{std::string("-1_1")}));
  EXPECT_EQ(*to_params(clip, {{"max", 4.0}}, x), (Params{std::string("-inf_4")}));
  Attrs back = to_attrs(clip, {std::string("-inf_4")}, x);
  EXPECT_EQ(back.f("min"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(back.f("max"), 4.0);

  const OpDef& hs = op_def("hardsigmoid");
  double sixth = static_cast<double>(1.0f / 6.0f);  // as ONNX stores it: a float
  auto p = to_params(hs, {{"alpha", sixth}, {"beta", 0.5}}, x);
  EXPECT_EQ(*p, (Params{std::string("0.16666667_0.5")}));
  EXPECT_EQ(to_attrs(hs, *p, x).f("alpha"), sixth);

  const OpDef& pow = op_def("pow");
  EXPECT_EQ(*to_params(pow, {{"exponent", 2.0}}, x), (Params{int64_t{2}}));
  EXPECT_EQ(*to_params(pow, {{"exponent", 0.5}}, x), (Params{std::string("0.5")}));
  EXPECT_EQ(to_attrs(pow, {int64_t{3}}, x).f("exponent"), 3.0);
  EXPECT_FALSE(to_params(pow, {{"exponent", std::nan("")}}, x));

  const OpDef& leaky = op_def("leaky_relu");
  EXPECT_EQ(*to_params(leaky, {}, x), (Params{std::string("0.01")}));
  EXPECT_THROW(leaky.params_to_attrs(Params{std::string("0.1_0.2")}, x), Error);
  EXPECT_THROW(leaky.params_to_attrs(Params{std::string("slope")}, x), Error);
}

// Reductions over one kept axis, expand, gather with one-dimensional indices and nearest
// resizes join the language; the forms it cannot spell stay outside.
TEST(OpsAxioms, ListAttributesAreSpelledAsOneParameter) {
  std::vector<TensorType> m{f32({2, 4})};
  const OpDef& sum = op_def("reduce_sum");
  EXPECT_EQ(*to_params(sum, {{"axes", Ints{-1}}}, m), (Params{int64_t{1}}));
  EXPECT_FALSE(to_params(sum, {{"axes", Ints{0, 1}}}, m));
  EXPECT_FALSE(to_params(sum, {{"axes", Ints{0}}, {"keepdims", int64_t{0}}}, m));
  Attrs r = to_attrs(op_def("reduce_mean"), {int64_t{0}}, m);
  EXPECT_EQ(r.ints("axes"), Ints{0});
  EXPECT_EQ(r.i("keepdims"), 1);

  const OpDef& expand = op_def("expand");
  EXPECT_EQ(*to_params(expand, {{"shape", Ints{3, 2, 4}}}, m), (Params{std::string("3_2_4")}));
  EXPECT_EQ(to_attrs(expand, {std::string("3_2_4")}, m).ints("shape"), (Ints{3, 2, 4}));
  EXPECT_EQ(to_attrs(expand, {int64_t{4}}, m).ints("shape"), Ints{4});
  EXPECT_THROW(expand.params_to_attrs(Params{std::string("3__4")}, m), Error);
  EXPECT_THROW(expand.params_to_attrs(Params{std::string("three")}, m), Error);

  const OpDef& gather = op_def("gather");
  Attrs g = {{"axis", int64_t{-1}}, {"indices", Ints{3, -1}}, {"indices_shape", Ints{2}}};
  EXPECT_EQ(*to_params(gather, g, m), (Params{int64_t{1}, std::string("3_-1")}));
  Attrs back = to_attrs(gather, {int64_t{1}, std::string("3_-1")}, m);
  EXPECT_EQ(back.ints("indices"), (Ints{3, -1}));
  EXPECT_EQ(back.ints("indices_shape"), Ints{2});
  EXPECT_FALSE(to_params(gather, {{"indices", Ints{1}}}, m));  // a scalar index drops the axis

  std::vector<TensorType> img{f32({1, 2, 3, 3})};
  const OpDef& resize = op_def("resize");
  Attrs nearest = {{"sizes", Ints{6, 6}},
                   {"scale_h", 2.0},
                   {"scale_w", 2.0},
                   {"coordinate_transformation_mode", std::string("asymmetric")},
                   {"nearest_mode", std::string("floor")}};
  auto p = to_params(resize, nearest, img);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, (Params{std::string("6-6-2-2-asymmetric-floor")}));
  EXPECT_EQ(to_attrs(resize, *p, img), normalize_attrs(resize, nearest));
  Attrs linear = nearest;
  linear.set("mode", std::string("linear"));
  EXPECT_FALSE(to_params(resize, linear, img));  // mixes neighbours: outside the language
  Attrs tiny = nearest;
  tiny.set("scale_h", 1e-5);
  EXPECT_FALSE(to_params(resize, tiny, img));  // no spelling without a stray '-'
  EXPECT_THROW(resize.params_to_attrs(Params{std::string("6-6-2-2")}, img), Error);
}

TEST(OpsAxioms, Costs) {
  auto cost = [](std::string_view op, const std::vector<Shape>& ins, Attrs a = {}) {
    std::vector<TensorType> in;
    for (auto& s : ins) in.push_back(f32(s));
    auto out = testutil::infer(op, in, a);
    const OpDef& d = op_def(op);
    return op_cost(d, normalize_attrs(d, a), in, out);
  };
  // conv: 2 * (C/g * kh * kw) per output, bytes of inputs and output.
  OpCost c = cost("conv", {{1, 4, 8, 8}, {6, 2, 3, 3}}, {{"pads", Ints{1, 1, 1, 1}}});
  EXPECT_EQ(c.flops, 2.0 * 2 * 9 * 6 * 64);
  EXPECT_EQ(c.bytes, 4.0 * (4 * 64 + 6 * 2 * 9 + 6 * 64));
  OpCost cr = cost("conv", {{1, 4, 8, 8}, {6, 2, 3, 3}, {6}}, {{"act", std::string("relu")}});
  EXPECT_EQ(cr.flops, 2.0 * 2 * 9 * 6 * 36 + 2 * 6 * 36);
  OpCost m = cost("matmul", {{5, 2, 3}, {3, 4}});
  EXPECT_EQ(m.flops, 2.0 * 5 * 2 * 3 * 4);
  EXPECT_EQ(m.bytes, 4.0 * (30 + 12 + 40));
  EXPECT_EQ(cost("poolmax", {{1, 2, 4, 4}}, {{"kernel", Ints{2, 2}}, {"stride", Ints{2, 2}}}).flops,
            4.0 * 8);
  EXPECT_EQ(cost("reshape", {{2, 6}}, {{"shape", Ints{3, 4}}}).bytes, 0.0);
  OpCost cat = cost("concat", {{2, 3}, {2, 5}}, {{"axis", 1}});
  EXPECT_EQ(cat.flops, 0.0);
  EXPECT_EQ(cat.bytes, 4.0 * 32);
}

}  // namespace
}  // namespace graphsub
