// The axioms of specs/operators.axioms hold on every small instance (bounded testing with the
// reference kernels), and planted wrong axioms are caught with the instance that breaks them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "rules/bounded_check.h"
#include "rules/rule_parser.h"

namespace graphsub::rules {
namespace {

const std::string kAxioms = std::string(GRAPHSUB_SOURCE_DIR) + "/specs/operators.axioms";

// The library-level tests use a smaller space than the file's (dimensions up to 2); the full
// space runs through the command line below.
ShapeSpace test_space(const RuleSet& s) {
  ShapeSpace space = s.shapes.value_or(ShapeSpace{});
  space.dims = {1, 2};
  return space;
}

TEST(Axioms, EveryAxiomHoldsOnEveryInstance) {
  RuleSet s = load_rules(kAxioms);
  ASSERT_GE(s.axioms.size(), 43u);
  AxiomCheckReport r = check_axioms(s, test_space(s));
  ASSERT_EQ(r.axioms.size(), s.axioms.size());
  for (auto& a : r.axioms) {
    EXPECT_TRUE(a.holds) << a.name << ": " << a.counterexample;
    EXPECT_GT(a.instances, 0u) << a.name;
  }
  EXPECT_TRUE(r.all_hold());
  EXPECT_GT(r.instances, 1000u);
}

// `graphsub check-axioms` over the whole shape space of the file (a few axioms under the
// sanitizers): every axiom holds, and the instance counts are printed.
TEST(Axioms, CheckAxiomsCommandPassesOnTheFullShapeSpace) {
  std::string cmd = std::string(GRAPHSUB_BINARY_DIR) + "/graphsub --quiet check-axioms";
#if defined(GRAPHSUB_ASAN)
  cmd += " --axiom concat-grid --axiom conv-cpool --axiom split0-concat";
#endif
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out.find("FALSE"), std::string::npos) << out;
  EXPECT_NE(out.find(" 0 false;"), std::string::npos) << out;
  EXPECT_NE(out.find("instances tested"), std::string::npos) << out;
#if !defined(GRAPHSUB_ASAN)
  RuleSet s = load_rules(kAxioms);
  EXPECT_NE(out.find(fmt::format("{} axioms from", s.axioms.size())), std::string::npos) << out;
  EXPECT_NE(out.find("ok     concat-conv-weight "), std::string::npos) << out;
#endif
}

// Wrong axioms over the real domains: each must be reported false.
RuleSet planted(const std::string& text) {
  RuleSet domains = load_rules(kAxioms);
  RuleSet s = parse_rules(text, "planted.axioms", &domains);
  s.domains = domains.domains;
  return s;
}

BoundedResult check_one(const std::string& text) {
  RuleSet s = planted(text);
  EXPECT_EQ(s.axioms.size(), 1u);
  // Dimensions up to 3, so that 3x3 kernels fit without padding.
  ShapeSpace space = test_space(load_rules(kAxioms));
  space.dims = {1, 2, 3};
  return bounded_test(s.axioms[0], s, space);
}

TEST(Axioms, ConcatIsNotAssociativeOnceSplitPointsAreTracked) {
  // Equal values, but the two sides record different cuts, so a later split tells them apart.
  BoundedResult r = check_one(
      "(axiom concat-assoc \"wrong\" (= (concat ?a (concat ?a ?x ?y) ?z) (concat ?a ?x (concat ?a "
      "?y ?z))))");
  EXPECT_FALSE(r.holds);
  EXPECT_NE(r.counterexample.find("types differ"), std::string::npos) << r.counterexample;
  EXPECT_NE(r.counterexample.find("?a=0"), std::string::npos) << r.counterexample;
}

TEST(Axioms, ConvWithReluDoesNotDistributeOverEwadd) {
  BoundedResult r = check_one(
      "(axiom conv-relu-ewadd \"wrong\" (= (conv ?s ?p relu ?x (ewadd ?y ?z))"
      " (ewadd (conv ?s ?p relu ?x ?y) (conv ?s ?p relu ?x ?z))))");
  EXPECT_FALSE(r.holds);
  EXPECT_EQ(r.output, 0);
  EXPECT_NE(r.counterexample.find("float values differ"), std::string::npos) << r.counterexample;
}

TEST(Axioms, MergingGroupedConvKernelsIsCaught) {
  // The known trap: without the density condition, concatenating the kernels of grouped
  // convolutions re-assigns output channels to groups.
  BoundedResult r = check_one(
      "(axiom conv-merge-any \"wrong\" (= (concat 1 (conv ?s ?p ?c ?x ?y) (conv ?s ?p ?c ?x ?z))"
      " (conv ?s ?p ?c ?x (concat 0 ?y ?z))))");
  EXPECT_FALSE(r.holds);
  EXPECT_NE(r.counterexample.find("values differ"), std::string::npos) << r.counterexample;
}

TEST(Axioms, OtherWrongPropertiesAreCaught) {
  for (const char* text : {
           "(axiom relu-ewadd \"wrong\" (= (relu (ewadd ?x ?y)) (ewadd (relu ?x) (relu ?y))))",
           "(axiom matmul-comm \"wrong\" (= (matmul none ?x ?y) (matmul none ?y ?x)))",
           "(axiom matmul-transpose-unswapped \"wrong\" (= (transpose (matmul none ?x ?y))"
           " (matmul none (transpose ?x) (transpose ?y))))",
           "(axiom conv-enlarge-valid \"wrong\" (= (conv ?s valid ?c ?x ?y) (conv ?s valid ?c ?x "
           "(enlarge ?k ?y))))",
           "(axiom split1-first \"wrong\" (= (split1 ?a (concat ?a ?x ?y)) ?x))",
           "(axiom poolmax-ewadd \"wrong\" (= (poolmax ?k ?s ?p (ewadd ?x ?y))"
           " (ewadd (poolmax ?k ?s ?p ?x) (poolmax ?k ?s ?p ?y))))",
           "(axiom smul-twice \"wrong\" (= (ewmul (smul ?x ?w) (smul ?y ?w)) (smul (ewmul ?x ?y) "
           "?w)))",
           "(axiom poolavg-concat-width \"wrong\" (= (concat 3 (poolavg ?k ?s ?p ?x) (poolavg ?k "
           "?s ?p ?y))"
           " (poolavg ?k ?s ?p (concat 3 ?x ?y))))",
           "(axiom never-typed \"wrong\" (= (split0 0 (concat 1 ?x ?y)) ?x))",
       }) {
    BoundedResult r = check_one(text);
    EXPECT_FALSE(r.holds) << text;
    EXPECT_FALSE(r.counterexample.empty()) << text;
  }
}

TEST(Axioms, ExactArithmeticCatchesWhatAFloatToleranceHides) {
  // With a tolerance too loose to notice anything, the wrap-around uint32 run still compares
  // exactly; with a stand-in involved (relu) it is not trusted to.
  RuleSet s = planted(
      "(axiom smul-drop \"wrong\" (= (ewadd ?x (smul ?y ?w)) ?x))\n"
      "(axiom relu-drop \"wrong\" (= (relu ?x) ?x))");
  ShapeSpace space;
  space.dims = {2};
  BoundedOptions loose;
  loose.numeric.tolerance.atol = 1e9;
  BoundedResult r = bounded_test(s.axioms[0], s, space, loose);
  EXPECT_FALSE(r.holds);
  EXPECT_NE(r.counterexample.find("exact uint32 values differ"), std::string::npos)
      << r.counterexample;
  BoundedResult relu = bounded_test(s.axioms[1], s, space, loose);
  EXPECT_TRUE(relu.holds) << relu.counterexample;
  EXPECT_EQ(relu.exact, 0u);
  EXPECT_GT(relu.instances, 0u);
}

TEST(Axioms, ReportIsIndependentOfThreadCount) {
  RuleSet s = planted(
      "(axiom a1 \"true\" (= (ewadd ?x ?y) (ewadd ?y ?x)))\n"
      "(axiom a2 \"wrong\" (= (concat ?a (relu ?x) (relu ?y)) (relu (concat ?a ?y ?x))))\n"
      "(axiom a3 \"true\" (= (concat ?a (relu ?x) (relu ?y)) (relu (concat ?a ?x ?y))))");
  ShapeSpace space;
  space.dims = {1, 2, 3};
  AxiomCheckOptions one, two;
  one.threads = 1;
  two.threads = 3;
  AxiomCheckReport a = check_axioms(s, space, one), b = check_axioms(s, space, two);
  ASSERT_EQ(a.axioms.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(a.axioms[i].holds, b.axioms[i].holds);
    EXPECT_EQ(a.axioms[i].instances, b.axioms[i].instances);
    EXPECT_EQ(a.axioms[i].counterexample, b.axioms[i].counterexample);
  }
  EXPECT_TRUE(a.axioms[0].holds);
  EXPECT_FALSE(a.axioms[1].holds);
  EXPECT_TRUE(a.axioms[2].holds);
  EXPECT_EQ(a.instances, b.instances);
}

// An instance bound stops the exhaustive test after that many instances in all, shared over
// the parameter assignments (each of the 4 axes gets its turn), and the same bound gives the
// same instances.
TEST(Axioms, AnInstanceBoundIsKeptAndSharedOverTheParameters) {
  RuleSet s =
      planted("(axiom t \"true\" (= (concat ?a (relu ?x) (relu ?y)) (relu (concat ?a ?x ?y))))");
  ShapeSpace space = test_space(load_rules(kAxioms));
  BoundedResult all = bounded_test(s.axioms[0], s, space);
  ASSERT_TRUE(all.holds) << all.counterexample;
  ASSERT_GT(all.instances, 100u);
  BoundedOptions bounded;
  bounded.max_instances = 40;
  BoundedResult some = bounded_test(s.axioms[0], s, space, bounded);
  EXPECT_TRUE(some.holds);
  EXPECT_LE(some.instances, 40u);
  EXPECT_GE(some.instances, 20u);
  EXPECT_EQ(some.param_sets, all.param_sets);
  EXPECT_EQ(bounded_test(s.axioms[0], s, space, bounded).instances, some.instances);
}

TEST(Instances, EnumerationFindsExactlyTheWellTypedShapes) {
  RuleSet s = planted("(axiom t \"\" (= (ewadd ?x ?y) (ewadd ?y ?x)))");
  ShapeSpace space;
  space.ranks = {1, 2};
  space.dims = {1, 2, 3};
  auto cands = candidate_types(s.axioms[0], space);
  EXPECT_EQ(cands["x"].size(), 3u + 9u);
  size_t n = 0;
  for_each_instance(s.axioms[0], {}, cands, [&](const Instance& in) {
    EXPECT_EQ(in.tensors.at("x").shape, in.tensors.at("y").shape);
    ++n;
    return true;
  });
  EXPECT_EQ(n, 12u);  // one instance per shape

  // Kernel-only variables take the kernel sizes for their spatial dimensions.
  RuleSet c = planted("(axiom k \"\" (= (conv 1 same none ?x ?w) (conv 1 same none ?x ?w)))");
  auto kc = candidate_types(c.axioms[0], ShapeSpace{});
  for (auto& t : kc["w"])
    if (t.rank() == 4) {
      EXPECT_TRUE(t.shape[2] == 1 || t.shape[2] == 3);
      EXPECT_TRUE(t.shape[3] == 1 || t.shape[3] == 3);
    }
  EXPECT_EQ(kc["x"].size(), 1u + 16u + 256u);

  // The split pass: shapes from split_dims, each without a split point and with a cut at 1 on
  // each axis of size at least 2.
  auto sc = candidate_types(c.axioms[0], ShapeSpace{}, true);
  EXPECT_EQ(sc["x"].size(), (1u) + (1u + 2u) + (1u + 4u));
  size_t with_split = 0;
  for (auto& t : sc["x"])
    if (t.has_splits()) {
      ++with_split;
      for (size_t a = 0; a < t.shape.size(); ++a)
        if (t.split(a)) {
          EXPECT_EQ(t.split(a)->cut, 1);
        }
    }
  EXPECT_EQ(with_split, 6u);
}

TEST(Instances, SplitPointsOfInputsAreCompared) {
  // Equal values, but only one side keeps the cut the input carries on its channel axis.
  // One side recording fewer cuts is compatible ...
  TensorType a{.shape = {1, 4, 2, 2}}, b = a;
  a.set_split(1, std::make_shared<const SplitTree>(SplitTree{.cut = 1}));
  EXPECT_TRUE(types_compatible(a, b));
  // ... two different cuts are not.
  b.set_split(1, std::make_shared<const SplitTree>(SplitTree{.cut = 2}));
  EXPECT_FALSE(types_compatible(a, b));
  b.set_split(1, nullptr);
  b.shape[0] = 2;
  EXPECT_FALSE(types_compatible(a, b));
}

}  // namespace
}  // namespace graphsub::rules
