// The Z3 verifier: every rule of tests/rules/true.rules is proved, every rule of
// tests/rules/false.rules rejected (numerically, naming the output), and the axioms do not let
// the solver prove false equalities even without the numerical test.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>

#include "rules/rule_parser.h"
#include "rules/sexpr.h"
#include "verify/verifier.h"

namespace graphsub::verify {
namespace {

const std::string kSrc = GRAPHSUB_SOURCE_DIR;

rules::RuleSet axioms() {
  return rules::load_rules(kSrc + "/specs/operators.axioms");
}

VerifyOptions options() {
  VerifyOptions o;
#if defined(GRAPHSUB_ASAN)
  o.timeout_ms = 60000;  // the sanitizers slow Z3's callers and our numeric test down a lot
#else
  o.timeout_ms = 20000;
#endif
  return o;
}

TEST(Verifier, ProvesEveryTrueRule) {
  rules::RuleSet ax = axioms();
  rules::RuleSet set = rules::load_rules(kSrc + "/tests/rules/true.rules", &ax);
  ASSERT_GE(set.rules.size(), 30u);
  size_t multi = 0;
  for (auto& r : set.rules) multi += r.source.size() > 1;
  EXPECT_GE(multi, 5u);
  Verifier v(ax, options());
  auto verdicts = v.verify_all(set.rules);
  ASSERT_EQ(verdicts.size(), set.rules.size());
  for (size_t i = 0; i < verdicts.size(); ++i) {
    EXPECT_EQ(verdicts[i].name, set.rules[i].name);
    EXPECT_TRUE(verdicts[i].proved())
        << verdicts[i].name << ": " << verdict_name(verdicts[i].verdict) << ": "
        << verdicts[i].reason;
    EXPECT_GT(verdicts[i].tested, 0u) << verdicts[i].name;
  }
}

TEST(Verifier, RejectsEveryFalseRuleNamingTheOutput) {
  rules::RuleSet ax = axioms();
  rules::RuleSet set = rules::load_rules(kSrc + "/tests/rules/false.rules", &ax);
  ASSERT_GE(set.rules.size(), 10u);
  Verifier v(ax, options());
  auto verdicts = v.verify_all(set.rules);
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const RuleVerdict& r = verdicts[i];
    EXPECT_EQ(r.verdict, Verdict::Counterexample) << r.name << ": " << r.reason;
    EXPECT_GE(r.output, 0) << r.name;
    EXPECT_NE(r.reason.find(fmt::format("output {}", r.output)), std::string::npos) << r.reason;
    EXPECT_EQ(r.solver_ms, 0.0) << r.name << " should be rejected before the solver runs";
  }
  // The multi-output rule whose second output is wrong is reported on output 1.
  for (auto& r : verdicts)
    if (r.name == "merge-matmuls-wrong-half") {
      EXPECT_EQ(r.output, 1);
    }
}

// Without the numerical test, the solver itself must not prove false equalities: an
// inconsistent axiom set would prove anything.
// misaligned-inner-split holds where b's columns match c's rows, and is false otherwise (a
// with 1 column, b with 2, c with 1 row); misaligned-ewmul-of-concats is false where a has 2
// rows and b 1: unconditional axioms over two concats let the solver prove both.
TEST(Verifier, AxiomsDoNotProveFalseEqualities) {
  rules::RuleSet ax = axioms();
  VerifyOptions o = options();
  o.numeric_test = false;
  o.timeout_ms = 5000;
  rules::RuleSet set = rules::parse_rules(R"(
    (rule drop-addend (source (ewadd ?x ?y)) (target ?x))
    (rule matmul-commutes (source (matmul none ?x ?y)) (target (matmul none ?y ?x)))
    (rule relu-distributes (source (relu (ewadd ?x ?y))) (target (ewadd (relu ?x) (relu ?y))))
    (rule concat-reassoc (source (concat ?a (concat ?a ?x ?y) ?z)) (target (concat ?a ?x (concat ?a ?y ?z))))
    (rule split-wrong-half (source (split1 ?a (concat ?a ?x ?y))) (target ?x))
    (rule merge-grouped (source (conv ?s ?p ?c ?x ?y) (conv ?s ?p ?c ?x ?z))
      (target (split0 1 (conv ?s ?p ?c ?x (concat 0 ?y ?z))) (split1 1 (conv ?s ?p ?c ?x (concat 0 ?y ?z)))))
    (rule swap-stride (source (conv 1 same none ?x ?w)) (target (conv 2 same none ?x ?w)))
    (rule misaligned-inner-split
      (source (matmul none (matmul relu ?a (concat 1 ?b ?c)) (concat 0 ?c ?d)))
      (target (matmul none (matmul relu ?a (concat 1 ?c ?b)) (concat 0 ?d ?c))))
    (rule misaligned-ewmul-of-concats
      (source (ewmul (concat 0 ?a ?b) (concat 0 ?b (smul ?c ?d))))
      (target (ewmul (concat 0 ?b ?c) (concat 0 ?a (smul ?b ?d)))))
  )",
                                          "false-equalities.rules", &ax);
  Verifier v(ax, o);
  for (auto& r : v.verify_all(set.rules)) {
    EXPECT_FALSE(r.proved()) << r.name;
    EXPECT_TRUE(r.verdict == Verdict::Unknown || r.verdict == Verdict::Timeout ||
                r.verdict == Verdict::Counterexample)
        << r.name << ": " << verdict_name(r.verdict) << " " << r.reason;
    EXPECT_FALSE(r.reason.empty());
  }
}

TEST(Verifier, ATrueRuleOutsideTheAxiomsIsNotProvedAndSaysWhy) {
  // relu is idempotent, but no axiom says so: numerically fine, unprovable.
  rules::RuleSet ax = axioms();
  rules::RuleSet set = rules::parse_rules(
      "(rule relu-twice (source (relu (relu ?x))) (target (relu ?x)))", "t.rules", &ax);
  VerifyOptions o = options();
  o.timeout_ms = 5000;
  RuleVerdict r = Verifier(ax, o).verify(set.rules[0]);
  EXPECT_GT(r.tested, 0u);
  EXPECT_TRUE(r.verdict == Verdict::Unknown || r.verdict == Verdict::Timeout) << r.reason;
  EXPECT_NE(r.reason.find("output 0"), std::string::npos) << r.reason;
}

TEST(Verifier, ADeterministicResourceLimitStopsTheSolver) {
  rules::RuleSet ax = axioms();
  rules::RuleSet set = rules::load_rules(kSrc + "/tests/rules/true.rules", &ax);
  VerifyOptions o = options();
  o.rlimit = 1;  // far too little for the associativity/commutativity search
  RuleVerdict r = Verifier(ax, o).verify(set.rules[0]);
  EXPECT_EQ(r.verdict, Verdict::Timeout) << r.reason;
  EXPECT_NE(r.reason.find("resource limit"), std::string::npos) << r.reason;
  o.rlimit = 0;
  EXPECT_TRUE(Verifier(ax, o).verify(set.rules[0]).proved());
}

// Rules false only at sizes the sampled pre-test does not try (3 or 4 wide): the solver leaves
// them open, and the exhaustive bounded test (what check-axioms runs) finds the counterexample,
// so they are reported false, not unknown.
TEST(Verifier, RulesTheSampleMissesAreFoundFalseByTheExhaustiveTest) {
  rules::RuleSet ax = axioms();
  rules::RuleSet set = rules::load_rules(kSrc + "/tests/rules/false_beyond_sample.rules", &ax);
  ASSERT_GE(set.rules.size(), 3u);
  VerifyOptions without = options();
  without.exhaustive_instances = 0;
  auto open = Verifier(ax, without).verify_all(set.rules);
  auto found = Verifier(ax, options()).verify_all(set.rules);
  for (size_t i = 0; i < set.rules.size(); ++i) {
    // The pre-test passed and the solver did not decide...
    EXPECT_TRUE(open[i].verdict == Verdict::Unknown || open[i].verdict == Verdict::Timeout)
        << open[i].name << ": " << verdict_name(open[i].verdict) << " " << open[i].reason;
    EXPECT_GT(open[i].tested, 0u) << open[i].name;
    EXPECT_EQ(open[i].exhaustive, 0u) << open[i].name;
    // ...and the exhaustive test, within its bound, found the counterexample.
    EXPECT_EQ(found[i].verdict, Verdict::Counterexample)
        << found[i].name << ": " << verdict_name(found[i].verdict) << " " << found[i].reason;
    EXPECT_EQ(found[i].output, 0) << found[i].name;
    EXPECT_GT(found[i].exhaustive, 0u) << found[i].name;
    EXPECT_LE(found[i].exhaustive, options().exhaustive_instances) << found[i].name;
    EXPECT_NE(found[i].reason.find("exhaustive bounded test"), std::string::npos)
        << found[i].reason;
  }
}

// A rule at the nesting limit of the rule language (rules/sexpr.h) goes through every stage
// that walks its terms (instantiation, the numeric test, the Z3 encoding) and is proved.
TEST(Verifier, ARuleAtTheNestingLimitIsProved) {
  rules::RuleSet ax = axioms();
  std::string chain = "?x";
  for (int i = 0; i < rules::kMaxNesting - 4; ++i) chain = "(relu " + chain + ")";
  rules::RuleSet set = rules::parse_rules(
      "(rule deep (source (transpose (transpose " + chain + "))) (target " + chain + "))",
      "deep.rules", &ax);
  RuleVerdict v = Verifier(ax, options()).verify(set.rules[0]);
  EXPECT_TRUE(v.proved()) << verdict_name(v.verdict) << " " << v.reason;
  EXPECT_GT(v.tested, 0u);
}

// Hostile rules past the bounds of bounded testing are Invalid, naming the bound: 40 parameter
// variables (4^40 assignments), 70 tensor variables (the search handles 64).
TEST(Verifier, RulesPastTheTestingBoundsAreInvalid) {
  rules::RuleSet ax = axioms();
  std::string tree = "?x0", sum = "?x0", rev = "?x69";
  for (int i = 0; i < 40; ++i) tree = fmt::format("(concat ?a{} {} ?x{})", i, tree, i + 1);
  for (int i = 1; i < 70; ++i) {
    sum = fmt::format("(ewadd {} ?x{})", sum, i);
    rev = fmt::format("(ewadd {} ?x{})", rev, 69 - i);
  }
  std::pair<std::string, std::string> cases[] = {
      {"(source " + tree + ") (target " + tree + ")", "more than 100000 assignments"},
      {"(source " + sum + ") (target " + rev + ")", "70 tensor variables, more than the 64"}};
  for (auto& [body, why] : cases) {
    rules::RuleSet set = rules::parse_rules("(rule r " + body + ")", "t.rules", &ax);
    RuleVerdict v = Verifier(ax, options()).verify(set.rules[0]);
    EXPECT_EQ(v.verdict, Verdict::Invalid) << why;
    EXPECT_NE(v.reason.find(why), std::string::npos) << v.reason;
  }
}

// Past the time limit with timeout_is_error, a check is an error for the caller, not a
// Timeout verdict that would make its output depend on the machine's load.
TEST(Verifier, PastTheSafetyTimeLimitIsAnErrorNotAVerdict) {
  rules::RuleSet ax = axioms();
  rules::RuleSet set = rules::load_rules(kSrc + "/tests/rules/true.rules", &ax);
  VerifyOptions o = options();
  o.timeout_ms = 0;
  o.timeout_is_error = true;
  o.rlimit = 10'000'000;
  Verifier v(ax, o);
  EXPECT_THROW(v.verify(set.rules[0]), SafetyLimitExceeded);
  o.reuse_context = true;
  std::string what;
  try {
    Verifier(ax, o).verify_all(set.rules);
  } catch (const SafetyLimitExceeded& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("safety time limit of 0 ms"), std::string::npos) << what;
}

// A rule whose time limit has run out before the solver starts is a timeout (the numeric
// test still ran); proofs on the same thread before and after it are unaffected.
TEST(Verifier, NoTimeLeftIsATimeout) {
  rules::RuleSet ax = axioms();
  rules::RuleSet set = rules::load_rules(kSrc + "/tests/rules/true.rules", &ax);
  for (bool reuse : {false, true}) {
    VerifyOptions generous = options();
    generous.reuse_context = reuse;
    VerifyOptions none = generous;
    none.timeout_ms = 0;
    Verifier g(ax, generous), v(ax, none);
    EXPECT_TRUE(g.verify(set.rules[0]).proved());
    RuleVerdict r = v.verify(set.rules[0]);
    EXPECT_EQ(r.verdict, Verdict::Timeout) << r.reason;
    EXPECT_GT(r.tested, 0u);
    EXPECT_NE(r.reason.find("no proof within 0 ms"), std::string::npos) << r.reason;
    EXPECT_TRUE(g.verify(set.rules[1]).proved());
  }
}

TEST(Verifier, RejectsRulesThatNeverTypeCheck) {
  rules::RuleSet ax = axioms();
  rules::RuleSet set = rules::parse_rules(
      "(rule never (source (transpose (conv 1 same none ?x ?w))) (target (transpose (conv 1 same "
      "none ?x ?w))))",
      "t.rules", &ax);
  RuleVerdict r = Verifier(ax, options()).verify(set.rules[0]);
  EXPECT_EQ(r.verdict, Verdict::Invalid);
  EXPECT_NE(r.reason.find("no instance type-checks"), std::string::npos) << r.reason;
}

// The first `n` false and the first `n` true test rules, alternated.
std::vector<rules::Rule> false_and_true_rules(const rules::RuleSet& ax, size_t n) {
  rules::RuleSet f = rules::load_rules(kSrc + "/tests/rules/false.rules", &ax);
  rules::RuleSet t = rules::load_rules(kSrc + "/tests/rules/true.rules", &ax);
  std::vector<rules::Rule> mixed;
  for (size_t i = 0; i < n; ++i) {
    mixed.push_back(f.rules.at(i));
    mixed.push_back(t.rules.at(i));
  }
  return mixed;
}

// Shared contexts are kept per lane, and a lane's rules are checked in order: each check sees
// the same solver history, so the resource counts (and with them the verdicts under a resource
// limit) are the same on one thread and on three, in two calls in a row.
TEST(Verifier, ResourceCountsDoNotDependOnThreads) {
  rules::RuleSet ax = axioms();
  std::vector<rules::Rule> mixed = false_and_true_rules(ax, 12);
  mixed.insert(mixed.end(), mixed.begin(), mixed.end());
  ASSERT_GT(mixed.size(), kSessionLanes);  // some lanes check two rules per call
  VerifyOptions o = options();
  o.numeric_test = false;  // the solver decides every one
  o.reuse_context = true;
  o.count_resources = true;
  std::vector<RuleVerdict> got[2][2];
  for (int t : {0, 1}) {
    o.threads = t == 0 ? 1 : 3;
    Verifier v(ax, o);
    for (int call : {0, 1}) got[t][call] = v.verify_all(mixed);
  }
  uint64_t total = 0;
  for (int call : {0, 1}) {
    ASSERT_EQ(got[0][call].size(), got[1][call].size());
    for (size_t i = 0; i < mixed.size(); ++i) {
      const RuleVerdict &a = got[0][call][i], &b = got[1][call][i];
      EXPECT_EQ(a.verdict, b.verdict) << a.name;
      EXPECT_EQ(a.resources, b.resources) << a.name << " call " << call;
      total += a.resources;
    }
  }
  EXPECT_GT(total, 0u);  // counted (a check the kept context settles at once counts 0)
}

TEST(Verifier, VerdictsDoNotDependOnThreads) {
  rules::RuleSet ax = axioms();
  std::vector<rules::Rule> mixed = false_and_true_rules(ax, 4);
  VerifyOptions one = options(), two = options();
  one.threads = 1;
  two.threads = 2;
  auto a = Verifier(ax, one).verify_all(mixed), b = Verifier(ax, two).verify_all(mixed);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].verdict, b[i].verdict);
    EXPECT_EQ(a[i].reason, b[i].reason);
  }
}

// Well-typed only where the image is at least 5 wide (a stride-2 conv keeps 3 of 5, a 3-wide
// valid pooling needs 3): outside the axioms' shape space (dimensions up to 4).
const char* kOnlyAtFive =
    "(rule five (source (poolavg 3 1 valid (conv 2 same none ?x ?w))) (target (poolavg 3 2 "
    "valid (conv 2 same none ?x ?w))))";

TEST(Verifier, FallbackTypesGiveAnInstanceOutsideTheShapeSpace) {
  rules::RuleSet ax = axioms();
  rules::RuleSet set = rules::parse_rules(kOnlyAtFive, "t.rules", &ax);
  RuleVerdict plain = Verifier(ax, options()).verify(set.rules[0]);
  EXPECT_EQ(plain.verdict, Verdict::Invalid) << plain.reason;
  VerifyOptions o = options();
  o.fallback_types = {TensorType{.shape = {4, 4}}, TensorType{.shape = {2, 2, 5, 5}},
                      TensorType{.shape = {2, 2, 3, 3}}};
  RuleVerdict with = Verifier(ax, o).verify(set.rules[0]);
  EXPECT_NE(with.verdict, Verdict::Invalid) << with.reason;
  EXPECT_GT(with.tested, 0u);
  // Still no proof: a stride-2 and a stride-1 pooling agree on this one size only.
  EXPECT_FALSE(with.proved());
}

TEST(Verifier, ReusedContextsGiveTheSameVerdictsInAnyOrder) {
  rules::RuleSet ax = axioms();
  std::vector<rules::Rule> mixed = false_and_true_rules(ax, 6);
  rules::RuleSet unknown = rules::parse_rules(
      "(rule unknown (source (concat 0 (concat 2 ?a ?b) (concat 2 ?b ?a))) (target (concat 2 "
      "(concat 0 ?a ?b) (concat 0 ?b ?a))))",
      "t.rules", &ax);
  mixed.push_back(unknown.rules[0]);
  VerifyOptions fresh = options(), reuse = options();
  fresh.threads = reuse.threads = 1;
  fresh.numeric_test = reuse.numeric_test = false;  // the solver decides every one
  reuse.reuse_context = true;
  auto a = Verifier(ax, fresh).verify_all(mixed);
  std::vector<rules::Rule> reversed(mixed.rbegin(), mixed.rend());
  Verifier v(ax, reuse);
  auto b = v.verify_all(reversed);
  auto c = v.verify_all(mixed);  // the same contexts again, other order
  ASSERT_EQ(a.size(), b.size());
  size_t proved = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const RuleVerdict& rb = b[a.size() - 1 - i];
    EXPECT_EQ(a[i].name, rb.name);
    EXPECT_EQ(a[i].verdict, rb.verdict) << a[i].name;
    EXPECT_EQ(a[i].reason, rb.reason) << a[i].name;
    EXPECT_EQ(a[i].verdict, c[i].verdict) << a[i].name;
    EXPECT_EQ(a[i].reason, c[i].reason) << a[i].name;
    proved += a[i].proved();
  }
  EXPECT_EQ(proved, 6u);
}

// A rule whose numeric instance search passes its bound is Invalid with a reason that says
// so (not a crash or an exhausted memory); with fallback shapes it is tested there and proved.
// A sum over 12 variables written in two orders.
std::string sum_rule(const std::string& name, const std::string& where) {
  auto sum = [](const std::vector<std::string>& v) {
    std::string t = "?" + v[0];
    for (size_t i = 1; i < v.size(); ++i) t = "(ewadd " + t + " ?" + v[i] + ")";
    return t;
  };
  std::vector<std::string> vars = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"};
  std::vector<std::string> rev(vars.rbegin(), vars.rend());
  return "(rule " + name + " (tensors ?a ?b ?c ?d ?e ?f ?g ?h ?i ?j ?k ?l) " + where + " (source " +
         sum(vars) + ") (target " + sum(rev) + "))";
}

// The numeric test samples a rule over many variables without enumerating its instances, so
// the instance-search bound does not get in its way.
TEST(Verifier, ManyVariablesAreSampledWithinTheBound) {
  rules::RuleSet ax = axioms();
  rules::RuleSet set = rules::parse_rules(sum_rule("many", ""), "t.rules", &ax);
  VerifyOptions o = options();
  o.max_partial_instances = 50;
  RuleVerdict v = Verifier(ax, o).verify(set.rules[0]);
  EXPECT_TRUE(v.proved()) << v.reason;
  EXPECT_GT(v.tested, 1u);
}

// A rule whose instances are too rare for the sampler goes to the bottom-up search; past its
// bound the verifier tries the fallback shapes, and without them reports the rule Invalid,
// naming the bound.
TEST(Verifier, InstanceSearchPastItsBoundIsReported) {
  rules::RuleSet ax = axioms();
  // No shape of the small space has a dimension 3: no instance there, found only after more
  // bindings than the sampler tries.
  rules::RuleSet set =
      rules::parse_rules(sum_rule("rare", "(where (= (dim ?a 1) 3))"), "t.rules", &ax);
  VerifyOptions o = options();
  o.max_partial_instances = 50;
  RuleVerdict bounded = Verifier(ax, o).verify(set.rules[0]);
  EXPECT_EQ(bounded.verdict, Verdict::Invalid);
  EXPECT_NE(bounded.reason.find("instance search too large"), std::string::npos) << bounded.reason;
  o.fallback_types = {TensorType{.shape = {2, 3}}};
  RuleVerdict fallback = Verifier(ax, o).verify(set.rules[0]);
  EXPECT_TRUE(fallback.proved()) << fallback.reason;
  EXPECT_EQ(fallback.tested, 1u);
  // With the default bound too: 12 variables over the small space are past it.
  RuleVerdict by_default = Verifier(ax, options()).verify(set.rules[0]);
  EXPECT_EQ(by_default.verdict, Verdict::Invalid);
  EXPECT_NE(by_default.reason.find("instance search too large"), std::string::npos)
      << by_default.reason;
}

std::pair<int, std::string> run(const std::string& args) {
  std::string cmd = std::string(GRAPHSUB_BINARY_DIR) + "/graphsub --quiet " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(VerifyCommand, PrintsALinePerRuleAndASummary) {
  auto [ok_status, ok] = run("verify " + kSrc + "/tests/rules/true.rules");
  EXPECT_EQ(ok_status, 0) << ok;
  EXPECT_NE(ok.find("proved      merge-matmuls"), std::string::npos) << ok;
  EXPECT_NE(ok.find("38 rules from"), std::string::npos) << ok;
  EXPECT_NE(ok.find(": 38 proved, 0 not proved"), std::string::npos) << ok;
  auto [bad_status, bad] = run("verify " + kSrc + "/tests/rules/false.rules");
  EXPECT_EQ(bad_status, 1) << bad;
  EXPECT_NE(bad.find("NOT PROVED  drop-addend"), std::string::npos) << bad;
  EXPECT_NE(bad.find("0 proved, 14 not proved (14 counterexample"), std::string::npos) << bad;
  auto [err_status, err] = run("verify /nonexistent.rules");
  EXPECT_EQ(err_status, 1) << err;
  EXPECT_NE(err.find("cannot read rule file '/nonexistent.rules'"), std::string::npos) << err;
}

// The shipped command proves every rule of the shipped library, those that type-check only at
// 5x5 images among them (tested at the generator's pool shapes). About 3 s of processor time
// with --reuse-context.
TEST(VerifyCommand, TheShippedLibraryIsProved) {
  rules::RuleSet ax = axioms();
  size_t n = rules::load_rules(kSrc + "/rules/default.rules", &ax).rules.size();
  ASSERT_GT(n, 1000u);
  auto [status, out] = run("verify --reuse-context " + kSrc + "/rules/default.rules");
  EXPECT_EQ(status, 0) << out.substr(0, 4000);
  EXPECT_NE(out.find(fmt::format("{} rules from {}/rules/default.rules: {} proved, 0 not proved", n,
                                 kSrc, n)),
            std::string::npos)
      << out.substr(out.size() > 2000 ? out.size() - 2000 : 0);
}

TEST(VerifyCommand, RulesFalseBeyondTheSampleAreCounterexamples) {
  auto [status, out] = run("verify " + kSrc + "/tests/rules/false_beyond_sample.rules");
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("0 proved, 3 not proved (3 counterexample, 0 unknown, 0 timeout"),
            std::string::npos)
      << out;
}

// A rule file nested 20,000 deep (a stack overflow in the parser once) is an error naming the
// file, the line and the limit, for `verify` and for `optimize --rules`.
TEST(VerifyCommand, DeeplyNestedRuleFileIsAnError) {
  std::string path = std::string(GRAPHSUB_BINARY_DIR) + "/deep_nesting_test.rules";
  {
    std::string text = "(rule deep\n  (source\n";
    for (int i = 0; i < 20000; ++i) text += "(relu\n";
    text += "?x" + std::string(20001, ')') + "\n  (target ?x))\n";
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fwrite(text.data(), 1, text.size(), f);
    fclose(f);
  }
  std::string where = fmt::format("{}:257:1: lists nested more than 256 deep", path);
  auto [verify_status, verify_out] = run("verify " + path);
  EXPECT_EQ(verify_status, 1) << verify_out;
  EXPECT_NE(verify_out.find(where), std::string::npos) << verify_out;
  auto [opt_status, opt_out] = run("optimize --model demo --rules " + path);
  EXPECT_EQ(opt_status, 1) << opt_out;
  EXPECT_NE(opt_out.find(where), std::string::npos) << opt_out;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace graphsub::verify
