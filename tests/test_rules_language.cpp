// The rule language: terms, the parser and printer (round trips, error locations), the axioms
// file, conditions, and instantiation of terms as IR.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "core/error.h"
#include "exec/reference_executor.h"
#include "rules/bounded_check.h"
#include "rules/conditions.h"
#include "rules/inference_cache.h"
#include "rules/instances.h"
#include "rules/instantiate.h"
#include "rules/rule_parser.h"
#include "rules/rule_printer.h"
#include "rules/sexpr.h"
#include "rules/type_prechecks.h"
#include "rules/type_sets.h"

namespace graphsub::rules {
namespace {

const std::string kAxioms = std::string(GRAPHSUB_SOURCE_DIR) + "/specs/operators.axioms";

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

void expect_same_rule(const Rule& a, const Rule& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.doc, b.doc);
  EXPECT_EQ(a.tensor_vars, b.tensor_vars);
  ASSERT_EQ(a.param_vars.size(), b.param_vars.size());
  for (size_t i = 0; i < a.param_vars.size(); ++i) {
    EXPECT_EQ(a.param_vars[i].name, b.param_vars[i].name);
    EXPECT_EQ(a.param_vars[i].domain, b.param_vars[i].domain);
  }
  auto same_terms = [](const std::vector<TermPtr>& x, const std::vector<TermPtr>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!term_equal(x[i], y[i])) return false;
    return true;
  };
  EXPECT_TRUE(same_terms(a.source, b.source)) << a.name;
  EXPECT_TRUE(same_terms(a.target, b.target)) << a.name;
  EXPECT_TRUE(same_terms(a.constraints, b.constraints)) << a.name;
}

TEST(Terms, PrintParseRoundTrip) {
  for (const char* text :
       {"(matmul none ?x (concat 1 ?y ?z))", "(conv 2 same relu ?x (enlarge 3 ?w))",
        "(split1 ?a (concat ?a ?x ?y))", "(ewmul ?x (iewmul))", "?x"}) {
    TermPtr t = parse_term(text);
    EXPECT_EQ(term_str(t), text);
    EXPECT_TRUE(term_equal(parse_term(term_str(t)), t));
  }
  EXPECT_FALSE(term_equal(parse_term("(ewadd ?x ?y)"), parse_term("(ewadd ?y ?x)")));
  EXPECT_FALSE(term_equal(parse_term("(concat 0 ?x ?y)"), parse_term("(concat 1 ?x ?y)")));
}

TEST(Terms, ParseErrorsNameWhatWasExpected) {
  EXPECT_NE(error_of([] { parse_term("(frobnicate ?x)"); }).find("unknown operator 'frobnicate'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_term("(conv 1 same ?x ?y)");
            }).find("conv expects 3 parameter(s) then 2 tensor"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_term("(ewadd ?x 3)"); }).find("expected a tensor term"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_term("(ewadd ?x ?y"); }).find("expected ')'"), std::string::npos);
  EXPECT_NE(error_of([] {
              parse_term("(concat ?x ?x ?y)");
            }).find("?x is used as a tensor here but as a parameter"),
            std::string::npos);
}

TEST(RuleFile, AxiomsFileHasNamedDocumentedAxiomsAndDomains) {
  RuleSet s = load_rules(kAxioms);
  EXPECT_GE(s.axioms.size(), 43u);
  EXPECT_TRUE(s.rules.empty());
  for (auto& a : s.axioms) {
    EXPECT_FALSE(a.doc.empty()) << a.name;
    EXPECT_EQ(a.source.size(), 1u);
  }
  ASSERT_NE(s.domain("stride"), nullptr);
  EXPECT_EQ(s.domain("stride")->values.size(), 2u);
  ASSERT_NE(s.domain("padding"), nullptr);
  ASSERT_NE(s.domain("act"), nullptr);
  ASSERT_TRUE(s.shapes.has_value());
  EXPECT_EQ(s.shapes->kernel_dims, (std::vector<int64_t>{1, 3}));
  // Parameter variables take the domain of the position they are used in.
  bool found = false;
  for (auto& a : s.axioms)
    if (a.name == "conv-relu") {
      found = true;
      ASSERT_EQ(a.param_vars.size(), 2u);
      EXPECT_EQ(a.param_vars[0].domain, "stride");
      EXPECT_EQ(a.param_vars[1].domain, "padding");
      EXPECT_EQ(a.tensor_vars, (std::vector<std::string>{"x", "y"}));
    }
  EXPECT_TRUE(found);
}

TEST(RuleFile, PrintingThenParsingGivesBackTheSameRules) {
  RuleSet axioms = load_rules(kAxioms);
  RuleSet again = parse_rules(ruleset_str(axioms), "printed.axioms");
  ASSERT_EQ(again.axioms.size(), axioms.axioms.size());
  for (size_t i = 0; i < axioms.axioms.size(); ++i)
    expect_same_rule(axioms.axioms[i], again.axioms[i]);
  EXPECT_EQ(ruleset_str(again), ruleset_str(axioms));

  const char* text = R"(
    ; two matmuls sharing their left operand become one matmul and a split
    (rule merge-matmuls "shared left operand"
      (params (?c act))
      (source (matmul ?c ?x ?y) (matmul ?c ?x ?z))
      (target (split0 1 (matmul ?c ?x (concat 1 ?y ?z)))
              (split1 1 (matmul ?c ?x (concat 1 ?y ?z)))))
    (rule guarded (tensors ?w ?x) (params (?s stride) (?p padding))
      (where (!= ?s 2) (or (= ?p same) (not (= (dim ?w 1) (dim ?x 1)))))
      (source (conv ?s ?p relu ?x ?w))
      (target (relu (conv ?s ?p none ?x ?w)))))";
  RuleSet rules = parse_rules(text, "t.rules", &axioms);
  ASSERT_EQ(rules.rules.size(), 2u);
  const Rule& m = rules.rules[0];
  EXPECT_EQ(m.tensor_vars, (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(m.source.size(), 2u);
  EXPECT_EQ(rules.rules[1].tensor_vars, (std::vector<std::string>{"w", "x"}));  // declared order
  RuleSet back = parse_rules(ruleset_str(rules), "t2.rules", &axioms);
  ASSERT_EQ(back.rules.size(), 2u);
  for (size_t i = 0; i < 2; ++i) expect_same_rule(rules.rules[i], back.rules[i]);
  EXPECT_EQ(rule_str(back.rules[1]), rule_str(rules.rules[1]));
}

TEST(RuleFile, RuleFilesRoundTripThroughThePrinter) {
  RuleSet axioms = load_rules(kAxioms);
  for (const char* f : {"/tests/rules/true.rules", "/tests/rules/false.rules"}) {
    RuleSet rules = load_rules(std::string(GRAPHSUB_SOURCE_DIR) + f, &axioms);
    ASSERT_FALSE(rules.rules.empty()) << f;
    RuleSet back = parse_rules(ruleset_str(rules), "printed.rules", &axioms);
    ASSERT_EQ(back.rules.size(), rules.rules.size()) << f;
    for (size_t i = 0; i < rules.rules.size(); ++i) expect_same_rule(rules.rules[i], back.rules[i]);
  }
}

TEST(RuleFile, ErrorsCarryFileLineAndColumn) {
  RuleSet axioms = load_rules(kAxioms);
  auto err = [&](const char* text) {
    return error_of([&] { parse_rules(text, "bad.rules", &axioms); });
  };
  EXPECT_EQ(err("(rule r\n  (source (conv 3 same none ?x ?w))\n  (target ?x))")
                .rfind("bad.rules:2:17: 3 is not in domain stride (expected one of: 1 2)", 0),
            0u)
      << err("(rule r\n  (source (conv 3 same none ?x ?w))\n  (target ?x))");
  EXPECT_EQ(err("(rule r (source (relu ?x)) (target (relu ?y)))")
                .rfind("bad.rules:1:1: rule 'r': ?y appears in the target", 0),
            0u);
  EXPECT_EQ(err("(rule r (source (relu ?x) (relu ?y)) (target (relu ?x)))")
                .rfind("bad.rules:1:1: rule 'r' has 2 source output(s) but 1 target", 0),
            0u);
  EXPECT_EQ(
      err("\n\n   (rule r (source (relu ?x)) (target ?x)").rfind("bad.rules:3:4: expected ')'", 0),
      0u);
  EXPECT_EQ(err("(rule r (params (?a nosuch)) (source (relu ?x)) (target ?x))")
                .rfind("bad.rules:1:21: domain 'nosuch' is not declared", 0),
            0u);
  EXPECT_EQ(err("(rule r (source (relu ?x)) (target ?x))\n(rule r (source (relu ?x)) (target ?x))")
                .rfind("bad.rules:2:1: name 'r' used twice", 0),
            0u);
  EXPECT_EQ(err("(frob)").rfind("bad.rules:1:1: expected (domain ...), (shapes ...), (axiom ...), "
                                "(rule ...) or (equality ...)",
                                0),
            0u);
  EXPECT_EQ(err("(equality e (lhs ?x) (rhs (split0 0 (concat 0 ?x ?y))) (rhs (relu ?x)))")
                .rfind("bad.rules:1:56: an equality has one (rhs ...)", 0),
            0u);
  EXPECT_EQ(err("(equality e (source (relu ?x)) (target ?x))")
                .rfind("bad.rules:1:13: (source ...) is not allowed in an equality", 0),
            0u);
  EXPECT_EQ(err("(equality e (lhs ?x) (rhs (relu ?y)))")
                .rfind("bad.rules:1:1: equality 'e' can drive a rewrite in neither direction", 0),
            0u);
  EXPECT_EQ(err("(rule r (source ?x) (target ?x))")
                .rfind("bad.rules:1:1: rule 'r': a source output must apply an operator", 0),
            0u);
  EXPECT_EQ(err("(rule r (where (!= ?q 1)) (source (relu ?x)) (target ?x))")
                .rfind("bad.rules:1:20: ?q must be declared", 0),
            0u);
  EXPECT_EQ(err(")").rfind("bad.rules:1:1: unexpected ')'", 0), 0u);
  EXPECT_NE(error_of([] {
              load_rules("/nonexistent/x.rules");
            }).find("cannot read rule file '/nonexistent/x.rules'"),
            std::string::npos);
}

// A hostile file nested 20,000 deep is an error naming the file, the line and the limit, not a
// stack overflow; the limit itself is accepted.
TEST(RuleFile, NestingPastTheLimitIsAnError) {
  std::string deep = "(rule deep\n  (source\n";
  for (int i = 0; i < 20000; ++i) deep += "(relu\n";
  deep += "?x";
  std::string err = error_of([&] { parse_rules(deep, "deep.rules"); });
  // The list that opens level kMaxNesting + 1: (rule on line 1, (source on 2, relus from 3.
  EXPECT_EQ(err.rfind(fmt::format("deep.rules:{}:1: lists nested more than {} deep",
                                  kMaxNesting + 1, kMaxNesting),
                      0),
            0u)
      << err;
  std::string closed = deep + std::string(20000, ')') + ")\n  (target ?x))";
  EXPECT_NE(error_of([&] { parse_rules(closed, "deep.rules"); }).find("nested more than 256"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_term(std::string(100000, '(')); }).find("nested more than"),
            std::string::npos);
  std::string at_limit = std::string(kMaxNesting, '(') + std::string(kMaxNesting, ')');
  EXPECT_EQ(read_sexprs(at_limit, "ok.rules").size(), 1u);
  EXPECT_NE(error_of([&] {
              read_sexprs("(" + at_limit + ")", "over.rules");
            }).find("over.rules:1:257: lists nested more than 256 deep"),
            std::string::npos);
}

// The deepest rule the limit allows parses, prints and parses back.
TEST(RuleFile, ARuleAtTheNestingLimitRoundTrips) {
  RuleSet axioms = load_rules(kAxioms);
  // (rule (source (transpose (transpose relu^n ?x)))): n + 4 lists.
  std::string chain = "?x";
  for (int i = 0; i < kMaxNesting - 4; ++i) chain = "(relu " + chain + ")";
  std::string text =
      "(rule deep (source (transpose (transpose " + chain + "))) (target " + chain + "))";
  RuleSet rules = parse_rules(text, "deep.rules", &axioms);
  ASSERT_EQ(rules.rules.size(), 1u);
  RuleSet back = parse_rules(ruleset_str(rules), "printed.rules", &axioms);
  ASSERT_EQ(back.rules.size(), 1u);
  expect_same_rule(rules.rules[0], back.rules[0]);
  EXPECT_NE(error_of([&] {
              parse_rules("(rule deeper (source (transpose (transpose (relu " + chain +
                              ")))) (target " + chain + "))",
                          "deep.rules", &axioms);
            }).find("deep.rules:1:"),
            std::string::npos);
}

TEST(Conditions, EvaluateParametersAndDimensions) {
  RuleSet axioms = load_rules(kAxioms);
  RuleSet rs = parse_rules(
      "(rule r (params (?s stride) (?p padding)) (where (!= ?s 2) (or (= ?p same) (= (dim ?w 1) "
      "(dim ?x 1))))"
      " (source (conv ?s ?p none ?x ?w)) (target (conv ?s ?p none ?x ?w)))",
      "c.rules", &axioms);
  const auto& c = rs.rules[0].constraints;
  EXPECT_TRUE(conditions_use_shapes(c));
  TensorType x{.shape = {1, 4, 3, 3}}, w_dense{.shape = {2, 4, 1, 1}},
      w_group{.shape = {2, 2, 1, 1}};
  std::map<std::string, AxiomParam> p1{{"s", int64_t{1}}, {"p", std::string("valid")}};
  EXPECT_TRUE(conditions_hold(c, p1, {{"x", x}, {"w", w_dense}}));
  EXPECT_FALSE(conditions_hold(c, p1, {{"x", x}, {"w", w_group}}));
  std::map<std::string, AxiomParam> p2{{"s", int64_t{1}}, {"p", std::string("same")}};
  EXPECT_TRUE(conditions_hold(c, p2, {{"x", x}, {"w", w_group}}));
  std::map<std::string, AxiomParam> p3{{"s", int64_t{2}}, {"p", std::string("same")}};
  EXPECT_FALSE(conditions_hold(c, p3, {{"x", x}, {"w", w_dense}}));
}

class InstantiateTest : public ::testing::Test {
 protected:
  TensorRef input(const std::string& name, Shape s) {
    return {g.add_input(name, TensorType{.shape = std::move(s)}), 0};
  }
  Graph g;
};

TEST_F(InstantiateTest, SharesEqualSubtermsAcrossOutputs) {
  Bindings b{
      .tensors = {{"x", input("x", {2, 4})}, {"y", input("y", {4, 3})}, {"z", input("z", {4, 5})}},
      .params = {{"c", std::string("relu")}}};
  Instantiator inst(g, b);
  TensorRef a = inst.build(parse_term("(split0 1 (matmul ?c ?x (concat 1 ?y ?z)))"));
  TensorRef c = inst.build(parse_term("(split1 1 (matmul ?c ?x (concat 1 ?y ?z)))"));
  EXPECT_EQ(a.node, c.node);  // one split node, two outputs
  EXPECT_EQ(a.output, 0u);
  EXPECT_EQ(c.output, 1u);
  EXPECT_EQ(g.num_ops(), 3u);  // concat, matmul, split
  EXPECT_EQ(g.type(a).shape, (Shape{2, 3}));
  EXPECT_EQ(g.type(c).shape, (Shape{2, 5}));
  const Node& mm = g.node(g.node(a.node).inputs[0].node);
  EXPECT_EQ(mm.op->name, "matmul");
  EXPECT_EQ(mm.attrs.s("act"), "relu");
  // Building the same term again adds nothing.
  inst.build(parse_term("(matmul ?c ?x (concat 1 ?y ?z))"));
  EXPECT_EQ(g.num_ops(), 3u);
}

TEST_F(InstantiateTest, SizesConstantsFromTheOperandTheyMeet) {
  Bindings b{.tensors = {{"x", input("x", {2, 3, 5, 5})}, {"m", input("m", {2, 4})}}};
  Instantiator inst(g, b);
  TensorRef p = inst.build(parse_term("(conv 1 same none ?x (cpool 3))"));
  const Node& conv = g.node(p.node);
  EXPECT_EQ(g.type(conv.inputs[1]).shape, (Shape{3, 1, 3, 3}));
  TensorRef id = inst.build(parse_term("(conv 1 same none ?x (iconv 3))"));
  EXPECT_EQ(g.type(g.node(id.node).inputs[1]).shape, (Shape{3, 3, 3, 3}));
  TensorRef mi = inst.build(parse_term("(matmul none ?m (imatmul))"));
  EXPECT_EQ(g.type(g.node(mi.node).inputs[1]).shape, (Shape{4, 4}));
  TensorRef ml = inst.build(parse_term("(matmul none (imatmul) ?m)"));
  EXPECT_EQ(g.type(g.node(ml.node).inputs[0]).shape, (Shape{2, 2}));
  TensorRef e = inst.build(parse_term("(ewmul (iewmul) ?m)"));
  EXPECT_EQ(g.type(g.node(e.node).inputs[0]).shape, (Shape{2, 4}));

  // The identities hold numerically on the reference kernels.
  g.add_output("conv_iconv", id);
  g.add_output("x", b.tensors["x"]);
  g.add_output("mm", mi);
  g.add_output("m", b.tensors["m"]);
  auto out = run_reference(g, random_feeds(g, 7));
  EXPECT_TRUE(compare(out[0], out[1], {.rtol = 1e-6, .atol = 1e-6}).ok);
  EXPECT_TRUE(compare(out[2], out[3], {.rtol = 1e-6, .atol = 1e-6}).ok);
}

TEST_F(InstantiateTest, ShapeErrorsNameTheTermAndTheShapes) {
  Bindings b{.tensors = {{"x", input("x", {2, 4})},
                         {"y", input("y", {3, 4})},
                         {"v", input("v", {2, 3, 4, 4})}}};
  std::string e = error_of([&] { instantiate(g, parse_term("(relu (matmul none ?x ?y))"), b); });
  EXPECT_NE(e.find("(matmul none ?x ?y) does not type-check on f32[2,4], f32[3,4]"),
            std::string::npos)
      << e;
  e = error_of([&] { instantiate(g, parse_term("(transpose ?v)"), b); });
  EXPECT_NE(e.find("lies outside the rule language"), std::string::npos) << e;
  e = error_of([&] { instantiate(g, parse_term("(imatmul)"), b); });
  EXPECT_NE(e.find("cannot size the constant (imatmul)"), std::string::npos) << e;
  e = error_of([&] { instantiate(g, parse_term("(relu ?q)"), b); });
  EXPECT_NE(e.find("?q is not bound"), std::string::npos) << e;
  e = error_of([&] { instantiate(g, parse_term("(concat ?a ?x ?y)"), b); });
  EXPECT_NE(e.find("?a is not bound"), std::string::npos) << e;
  // Broadcasting matmul is outside the language (axis numbers would name different axes).
  Bindings b2{.tensors = {{"v", b.tensors["v"]}, {"w", input("w", {4, 2})}}};
  e = error_of([&] { instantiate(g, parse_term("(matmul none ?v ?w)"), b2); });
  EXPECT_NE(e.find("equal rank"), std::string::npos) << e;
}

TEST(InferTermType, AgreesWithInstantiation) {
  TypeBindings tb{.tensors = {{"x", TensorType{.shape = {1, 4, 5, 5}}},
                              {"w", TensorType{.shape = {6, 4, 3, 3}}}},
                  .params = {{"s", int64_t{2}}}};
  TermPtr t = parse_term("(concat 1 (conv ?s same none ?x ?w) (conv ?s same none ?x ?w))");
  TensorType ty = infer_term_type(t, tb);
  EXPECT_EQ(ty.shape, (Shape{1, 12, 3, 3}));
  ASSERT_NE(ty.split(1), nullptr);
  EXPECT_EQ(ty.split(1)->cut, 6);
  Graph g;
  Bindings b{.tensors = {{"x", {g.add_input("x", tb.tensors["x"]), 0}},
                         {"w", {g.add_input("w", tb.tensors["w"]), 0}}},
             .params = tb.params};
  EXPECT_EQ(g.type(instantiate(g, t, b)), ty);
  tb.tensors["w"].shape = {6, 3, 3, 3};  // 4 channels do not split into groups of 3
  EXPECT_THROW(infer_term_type(t, tb), Error);
}

}  // namespace
}  // namespace graphsub::rules

namespace graphsub::rules {
namespace {

// The rule and candidate shapes the instance tests enumerate: a matmul over a concat, rank 2.
struct MatmulOverConcat {
  static ShapeSpace space() {
    ShapeSpace sp;
    sp.ranks = {2};
    sp.dims = {1, 2, 3};
    return sp;
  }
  RuleSet ax = load_rules(kAxioms);
  RuleSet s = parse_rules(
      "(rule m (source (matmul none ?x (concat 1 ?y ?z))) (target (concat 1 (matmul none ?x ?y) "
      "(matmul none ?x ?z))))",
      "t.rules", &ax);
  const Rule& r = s.rules[0];
  Candidates cands = candidate_types(r, space());
};

// spread_instances picks from the instances for_each_instance visits: the first, the last and
// evenly spaced ones between, each with the same types.
TEST(Instances, SamplesSpreadEvenlyOverTheEnumeration) {
  MatmulOverConcat m;
  const Rule& r = m.r;
  const Candidates& cands = m.cands;
  std::vector<Instance> all;
  for_each_instance(r, {}, cands, [&](const Instance& in) {
    all.push_back(in);
    return true;
  });
  ASSERT_GE(all.size(), 10u);
  for (size_t k : {size_t{1}, size_t{2}, size_t{5}, all.size() + 3}) {
    std::vector<Instance> got = spread_instances(r, {}, cands, k);
    size_t n = std::min(k, all.size());
    ASSERT_EQ(got.size(), n) << k;
    for (size_t i = 0; i < n; ++i) {
      const Instance& want = all[n == 1 ? 0 : i * (all.size() - 1) / (n - 1)];
      EXPECT_EQ(instance_str(got[i]), instance_str(want)) << k << " " << i;
    }
  }
  // Only the first `limit` instances are sampled from.
  std::vector<Instance> first = spread_instances(r, {}, cands, 2, 3);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(instance_str(first[1]), instance_str(all[2]));
}

// sample_instances draws distinct well-typed instances (each one for_each_instance visits),
// the same ones for the same seed; other seeds draw other ones.
TEST(Instances, RandomSamplesAreWellTypedDistinctAndSeeded) {
  MatmulOverConcat m;
  std::set<std::string> all;
  for_each_instance(m.r, {}, m.cands, [&](const Instance& in) {
    all.insert(instance_str(in));
    return true;
  });
  ASSERT_GE(all.size(), 10u);
  auto strs = [&](uint64_t seed, size_t k) {
    std::vector<std::string> out;
    for (auto& in : sample_instances(m.r, {}, m.cands, k, seed)) out.push_back(instance_str(in));
    return out;
  };
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    std::vector<std::string> got = strs(seed, 4);
    EXPECT_GE(got.size(), 2u) << seed;
    EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), got.size()) << seed;
    for (auto& g : got) EXPECT_TRUE(all.count(g)) << g;
    EXPECT_EQ(got, strs(seed, 4)) << seed;
    seen.insert(got.begin(), got.end());
  }
  EXPECT_GT(seen.size(), 8u);  // not the same few instances whatever the seed
}

// Shape inference is kept per thread across rules and parameter assignments (rules/
// inference_cache.h), in both searches: what a thread inferred before does not change the
// instances. Concat along parameter ?a types differently for each axis, so a cache keyed
// without the assignment would hand axis 1 the types of axis 0.
TEST(Instances, InferenceKeptAcrossAssignmentsDoesNotChangeTheInstances) {
  RuleSet ax = load_rules(kAxioms);
  RuleSet s = parse_rules(
      "(rule c (source (relu (concat ?a ?y ?z))) (target (concat ?a (relu ?y) (relu ?z))))",
      "t.rules", &ax);
  const Rule& r = s.rules[0];
  Candidates cands = candidate_types(r, MatmulOverConcat::space());
  auto strs = [&](int64_t axis) {
    ParamAssignment p{{"a", AxiomParam{axis}}};
    std::vector<std::string> out;
    for (auto& in : spread_instances(r, p, cands, 1000)) out.push_back("all " + instance_str(in));
    for (auto& in : sample_instances(r, p, cands, 4, 1))
      out.push_back("sampled " + instance_str(in));
    return out;
  };
  std::vector<std::string> axis0 = strs(0), axis1_after_axis0 = strs(1);
  std::vector<std::string> axis1_alone;
  std::thread([&] { axis1_alone = strs(1); }).join();  // a thread with a cache of its own
  EXPECT_EQ(axis1_after_axis0, axis1_alone);
  EXPECT_NE(axis0, axis1_alone);
  EXPECT_GE(axis1_alone.size(), 10u);
}

// The thread's table of results grows from a few thousand slots and, past its bound, starts
// over: every key keeps its own result throughout, and a result is computed only when the
// key is not held (once per key before the table starts over).
TEST(Instances, InferenceCacheKeepsEveryKeysResultPastGrowthAndReset) {
  std::thread([] {
    InferenceCache& cache = InferenceCache::of_thread();
    const TensorType a{.shape = {2, 3}}, b{.shape = {4}};
    const int32_t ia = cache.type_id(a), ib = cache.type_id(b);
    auto expected = [&](uint64_t k) { return k % 3 == 0 ? -1 : k % 3 == 1 ? ia : ib; };
    auto key = [](uint64_t k) {
      uint64_t ids[3] = {k & 0xFFFF, k >> 16, k % 7};
      return InferenceCache::key_of(static_cast<uint32_t>(k % 5), std::span(ids, 3));
    };
    auto lookup = [&](uint64_t k, int& computed) {
      return cache.result(key(k), [&]() -> std::optional<TensorType> {
        ++computed;
        int32_t e = expected(k);
        if (e < 0) return std::nullopt;
        return e == ia ? a : b;
      });
    };
    // Below the bound (half of 2^19 slots): computed once, then found.
    const uint64_t held = 200000;
    int computed = 0;
    for (uint64_t k = 0; k < held; ++k) ASSERT_EQ(lookup(k, computed), expected(k)) << k;
    EXPECT_EQ(computed, static_cast<int>(held));
    for (uint64_t k = 0; k < held; ++k) ASSERT_EQ(lookup(k, computed), expected(k)) << k;
    EXPECT_EQ(computed, static_cast<int>(held));
    // Past the bound the table starts over: results stay right, some are computed again.
    for (uint64_t k = held; k < 3 * held; ++k) ASSERT_EQ(lookup(k, computed), expected(k)) << k;
    for (uint64_t k = 0; k < 3 * held; ++k) ASSERT_EQ(lookup(k, computed), expected(k)) << k;
    EXPECT_GT(computed, static_cast<int>(3 * held));
  }).join();
}

// No instance at all: empty, both when the search settles it within its steps and when it
// hands over to the bottom-up enumeration (which then applies its bound).
TEST(Instances, RandomSamplesOfARuleThatNeverTypeChecks) {
  RuleSet ax = load_rules(kAxioms);
  ShapeSpace sp;
  sp.ranks = {2};
  sp.dims = {1, 2};
  RuleSet small =
      parse_rules("(rule n (source (concat 3 ?y ?z)) (target (concat 3 ?z ?y)))", "t.rules", &ax);
  EXPECT_TRUE(
      sample_instances(small.rules[0], {}, candidate_types(small.rules[0], sp), 4, 1).empty());
  // Four variables over 90 shapes each and a condition that never holds, checked only once
  // every variable is bound: more bindings than one search may try.
  sp.ranks = {2, 4};
  sp.dims = {1, 2, 3};
  RuleSet big = parse_rules(
      "(rule b (tensors ?a ?b ?c ?d) (where (= (dim ?a 0) 5)) (source (ewadd (ewadd ?a ?b) "
      "(ewadd ?c ?d))) (target (ewadd (ewadd ?b ?a) (ewadd ?d ?c))))",
      "t.rules", &ax);
  const Rule& r = big.rules[0];
  Candidates cands = candidate_types(r, sp);
  ASSERT_EQ(cands.at("c").size(), 90u);
  EXPECT_TRUE(sample_instances(r, {}, cands, 4, 1).empty());
  EXPECT_THROW(sample_instances(r, {}, cands, 4, 1, 50), InstanceSearchTooLarge);
}

// The instance search stops with InstanceSearchTooLarge past its bound instead of growing
// without limit; under the bound it visits the same instances.
// A balanced tree of concats whose axes are `n` distinct parameter variables.
std::string concat_tree(int n) {
  std::vector<std::string> level;
  for (int i = 0; i <= n; ++i) level.push_back(fmt::format("?x{}", i));
  int axis = 0;
  while (level.size() > 1) {
    std::vector<std::string> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2)
      next.push_back(fmt::format("(concat ?a{} {} {})", axis++, level[i], level[i + 1]));
    if (level.size() % 2) next.push_back(level.back());
    level = next;
  }
  return level[0];
}

// Parameter assignments come in domain order, the last parameter fastest; past
// kMaxParamAssignments (a hostile file with many parameter variables) they are an error naming
// the rule and the limit, not an exhausted memory.
TEST(Instances, ParameterAssignmentsInOrderAndBounded) {
  RuleSet axioms = load_rules(kAxioms);
  RuleSet two = parse_rules(
      "(rule r (source (conv ?s ?p none ?x ?w)) (target (conv ?s ?p none "
      "?x ?w)))",
      "t.rules", &axioms);
  auto ps = param_assignments(two.rules[0], axioms);
  ASSERT_EQ(ps.size(), 4u);  // stride {1, 2} x padding {same, valid}
  EXPECT_EQ(std::get<int64_t>(ps[0].at("s")), 1);
  EXPECT_EQ(std::get<std::string>(ps[0].at("p")), "same");
  EXPECT_EQ(std::get<std::string>(ps[1].at("p")), "valid");
  EXPECT_EQ(std::get<int64_t>(ps[2].at("s")), 2);
  std::string tree = concat_tree(40);  // 4^40 assignments of the 40 axes
  RuleSet many =
      parse_rules("(rule many (source " + tree + ") (target " + tree + "))", "t.rules", &axioms);
  ASSERT_EQ(many.rules[0].param_vars.size(), 40u);
  EXPECT_NE(error_of([&] {
              param_assignments(many.rules[0], axioms);
            }).find("many: its 40 parameter variables have more than 100000 assignments"),
            std::string::npos);
}

TEST(Instances, SearchStopsPastItsBound) {
  MatmulOverConcat m;
  const Rule& r = m.r;
  const Candidates& cands = m.cands;
  auto count = [&](size_t bound) {
    size_t n = 0;
    for_each_instance(
        r, {}, cands,
        [&](const Instance&) {
          ++n;
          return true;
        },
        bound);
    return n;
  };
  size_t all = count(kMaxPartialInstances);
  ASSERT_GE(all, 10u);
  EXPECT_EQ(count(100000), all);
  EXPECT_THROW(count(5), InstanceSearchTooLarge);
  EXPECT_THROW(spread_instances(r, {}, cands, 4, 100000, 5), InstanceSearchTooLarge);
  try {
    count(5);
  } catch (const InstanceSearchTooLarge& e) {
    EXPECT_NE(std::string(e.what()).find("m: instance search too large"), std::string::npos)
        << e.what();
  }
}

// The type-set pre-check (rules/type_sets.h) says "no instance" only where the instance search
// finds none, and settles a rule that never type-checks without the search: MultiHeadAttention
// in the language takes matrices, a convolution makes rank-4 tensors.
TEST(TypeSets, NoInstanceOnlyWhereTheSearchFindsNone) {
  RuleSet ax = load_rules(kAxioms);
  ShapeSpace sp;
  sp.ranks = {0, 2, 4};
  sp.dims = {1, 2, 3};
  sp.kernel_dims = {1, 3};
  RuleSet s = parse_rules(
      "(rule conv_into_attention (source (ort_mha 1 (conv 1 same none ?x ?w) ?k ?v)) "
      "(target (ort_mha 1 (conv 1 same none ?x ?w) ?k ?v)))\n"
      "(rule shared_square (source (matmul none ?x ?x)) (target (matmul none ?x ?x)))\n"
      "(rule matmul_concat (source (matmul none ?x (concat 1 ?y ?z))) (target (concat 1 "
      "(matmul none ?x ?y) (matmul none ?x ?z))))\n"
      "(rule concat_past_rank (source (concat 3 (transpose ?y) ?z)) (target (concat 3 "
      "(transpose ?y) ?z)))\n"
      "(rule ewadd_of_convs (source (ewadd (conv 1 valid none ?x ?w) (smul ?y ?c))) "
      "(target (ewadd (smul ?y ?c) (conv 1 valid none ?x ?w))))\n"
      "(rule shared_by_two_outputs (source (ort_mha 1 (ewmul ?a ?b) ?c ?d) (conv 1 valid none "
      "?e (ewmul ?a ?b))) (target (ort_mha 1 (ewmul ?b ?a) ?c ?d) (conv 1 valid none ?e "
      "(ewmul ?b ?a))))\n"
      "(rule one_variable_two_ranks (source (ewadd (transpose ?x) (relu ?y)) (conv 1 same none "
      "?x ?w)) (target (ewadd (transpose ?x) (relu ?y)) (conv 1 same none ?x ?w)))\n",
      "t.rules", &ax);
  std::map<std::string, bool> may;
  for (const Rule& r : s.rules) {
    Candidates cands = candidate_types(r, sp);
    may[r.name] = may_type_check(r, {}, cands);
    size_t n = 0;
    for_each_instance(r, {}, cands, [&](const Instance&) { return ++n < 1; });
    if (n > 0) {  // never "no instance" for a rule that has one
      EXPECT_TRUE(may[r.name]) << r.name;
    }
  }
  EXPECT_FALSE(may.at("conv_into_attention"));
  EXPECT_FALSE(may.at("concat_past_rank"));
  EXPECT_TRUE(may.at("shared_square"));
  EXPECT_TRUE(may.at("matmul_concat"));
  EXPECT_TRUE(may.at("ewadd_of_convs"));
  // Each output type-checks alone, not with one type for what they share.
  EXPECT_FALSE(may.at("shared_by_two_outputs"));
  EXPECT_FALSE(may.at("one_variable_two_ranks"));
  // The sampler settles it without the bottom-up search, which a bound of 10 partial
  // instances would stop: its randomized search runs out of steps over these shapes, and the
  // type sets answer before the bottom-up search would start.
  const Rule& r = s.rules[0];
  Candidates cands = candidate_types(r, sp);
  EXPECT_THROW(for_each_instance(
                   r, {}, cands, [](const Instance&) { return true; }, 10),
               InstanceSearchTooLarge);
  EXPECT_TRUE(sample_instances(r, {}, cands, 4, 1, 10).empty());
  BoundedOptions sampled;
  sampled.max_per_params = 1;
  sampled.max_partial_instances = 10;
  BoundedResult res = bounded_test(r, ax, sp, sampled);
  EXPECT_FALSE(res.holds);
  EXPECT_EQ(res.instances, 0u);
  EXPECT_EQ(res.counterexample, "no instance type-checks in the shape space");
}

// The answer does not depend on what the thread computed before (its sets are kept per
// thread across rules): the same on a fresh thread as after other rules.
TEST(TypeSets, AnswerIndependentOfWhatTheThreadSawBefore) {
  RuleSet ax = load_rules(kAxioms);
  ShapeSpace sp;
  sp.ranks = {2, 4};
  sp.dims = {1, 2};
  sp.kernel_dims = {1, 3};
  RuleSet s = parse_rules(
      "(rule a (source (ewadd (transpose ?x) (conv 1 same none ?y ?w))) (target (ewadd "
      "(transpose ?x) (conv 1 same none ?y ?w))))\n"
      "(rule b (source (ewadd (transpose ?x) ?y)) (target (ewadd ?y (transpose ?x))))\n",
      "t.rules", &ax);
  auto answers = [&] {
    std::vector<bool> out;
    for (const Rule& r : s.rules) out.push_back(may_type_check(r, {}, candidate_types(r, sp)));
    return out;
  };
  std::vector<bool> here = answers(), again = answers(), fresh;
  std::thread([&] { fresh = answers(); }).join();
  EXPECT_EQ(here, (std::vector<bool>{false, true}));
  EXPECT_EQ(again, here);
  EXPECT_EQ(fresh, here);
}

// The pre-checks before shape inference (arguments_may_fit) only skip what inference would
// refuse: over every pair or triple of small shapes, a combination they refuse does not
// type-check, for each operator they filter; and they do refuse many.
TEST(TypeSets, PrechecksRefuseOnlyWhatInferenceRefuses) {
  RuleSet ax = load_rules(kAxioms);
  RuleSet s = parse_rules(
      "(rule add (source (add ?x ?y)) (target (add ?y ?x)))\n"
      "(rule mul (source (mul ?x ?y)) (target (mul ?y ?x)))\n"
      "(rule conv (source (conv 1 valid none ?x ?y)) (target (conv 1 valid none ?x ?y)))\n"
      "(rule attention (source (attention 1 ?x ?y ?z)) (target (attention 1 ?x ?y ?z)))\n",
      "t.rules", &ax);
  std::vector<TensorType> types;
  for (Shape sh : {Shape{}, Shape{1, 2}, Shape{2, 2}, Shape{2, 1}, Shape{2, 3}, Shape{3, 2},
                   Shape{1, 2, 2, 2}, Shape{2, 2, 3, 3}, Shape{2, 2, 1, 1}, Shape{2, 1, 3, 3}})
    types.push_back(TensorType{.shape = sh});
  size_t typed = 0, refused = 0;
  for (const Rule& r : s.rules) {
    const TermPtr& app = r.source[0];
    const AxiomOp& op = *find_axiom_op(app->name);
    const bool unpadded = op.op->name == "conv" && unpadded_conv(*app, {});
    const size_t n = app->args.size() - op.num_params();
    std::vector<size_t> digit(n, 0);
    while (true) {
      std::vector<std::optional<TensorType>> args;
      for (size_t d : digit) args.push_back(types[d]);
      bool infers = true;
      try {
        infer_app_type(app, {}, args);
      } catch (const Error&) {
        infers = false;
      }
      bool may = arguments_may_fit(op, unpadded, args);
      if (infers) {
        EXPECT_TRUE(may) << r.name << " " << args[0]->str() << " " << args[1]->str();
        ++typed;
      } else if (!may) {
        ++refused;
      }
      size_t k = n;
      while (k > 0 && ++digit[k - 1] == types.size()) digit[--k] = 0;
      if (k == 0) break;
    }
  }
  EXPECT_GT(typed, 50u);
  EXPECT_GT(refused, 200u);  // 272: the filter does refuse
}

}  // namespace
}  // namespace graphsub::rules
