// The rule library: an equality stored once is used in both directions (NAME, NAME~rev);
// names of generated equalities come from their content; one name for two different rules is
// an error naming both places; disabled rules are left out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "ir/builder.h"
#include "opt/match/graph_index.h"
#include "opt/transforms/rule_library.h"
#include "rules/orientations.h"
#include "rules/rule_parser.h"

namespace graphsub::opt {
namespace {

class CountingReporter : public Reporter {
 public:
  std::vector<std::string> warnings;
  void warn(std::string_view line) override { warnings.emplace_back(line); }
};

// A scratch folder for rule files, removed at the end of the test.
class OptLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("graphsub_test_opt_library_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  RuleLibrary load(const std::vector<std::string>& files,
                   const std::vector<std::string>& disabled = {}) {
    RuleLibraryOptions o;
    o.rule_files = files;
    o.builtin = false;
    o.disabled = disabled;
    return RuleLibrary(o, reporter_);
  }

  std::filesystem::path dir_;
  CountingReporter reporter_;
};

std::vector<std::string> names(const RuleLibrary& lib) {
  std::vector<std::string> out;
  for (const Transform* t : lib.transforms()) out.push_back(t->name());
  return out;
}

// relu(a) + b = b + relu(a): a rewrite either way.
const char* kSwapReluAdd = R"(
(equality swap-relu-add
  (tensors ?a ?b)
  (lhs (ewadd (relu ?a) ?b))
  (rhs (ewadd ?b (relu ?a))))
)";

size_t applications(const Transform& t, const Graph& g) {
  GraphIndex ix(g);
  size_t n = 0;
  apply_everywhere(t, ix, [&](Candidate&&) { ++n; });
  return n;
}

TEST_F(OptLibrary, AnEqualityStoredOnceRewritesInBothDirections) {
  RuleLibrary lib = load({write("one.rules", kSwapReluAdd)});
  ASSERT_EQ(names(lib), (std::vector<std::string>{"swap-relu-add", "swap-relu-add~rev"}));
  const Transform& forward = *lib.transforms()[0];
  const Transform& backward = *lib.transforms()[1];

  GraphBuilder left;  // relu(x) + y: the left-hand side
  auto x = left.input("x", {2, 4});
  left.output("z", left.op("ewadd", {left.relu(x), left.input("y", {2, 4})}));
  Graph relu_first = left.finish();
  GraphBuilder right;  // y + relu(x): the right-hand side
  auto y = right.input("y", {2, 4});
  right.output("z", right.op("ewadd", {y, right.relu(right.input("x", {2, 4}))}));
  Graph relu_second = right.finish();

  EXPECT_EQ(applications(forward, relu_first), 1u);
  EXPECT_EQ(applications(backward, relu_second), 1u);
  EXPECT_EQ(applications(forward, relu_second), 0u);
  EXPECT_EQ(applications(backward, relu_first), 0u);
}

TEST_F(OptLibrary, AnEqualityWithABareVariableSideRewritesOneWay) {
  // split0(concat(a, b)) = a: only the left side can be matched.
  RuleLibrary lib = load({write("one.rules", R"(
(equality drop-concat
  (tensors ?a ?b)
  (lhs (split0 0 (concat 0 ?a ?b)))
  (rhs ?a))
)")});
  EXPECT_EQ(names(lib), (std::vector<std::string>{"drop-concat"}));
  // With the sides swapped, only the right-to-left direction.
  RuleLibrary swapped = load({write("two.rules", R"(
(equality drop-concat
  (tensors ?a ?b)
  (lhs ?a)
  (rhs (split0 0 (concat 0 ?a ?b))))
)")});
  EXPECT_EQ(names(swapped), (std::vector<std::string>{"drop-concat~rev"}));
  // Neither side matchable: an error at parse time.
  EXPECT_THROW(load({write("three.rules", "(equality e (tensors ?a ?b) (lhs ?a) (rhs ?b))")}),
               Error);
}

TEST_F(OptLibrary, DisablingAnEqualityDisablesBothDirectionsItsReverseNameOnlyOne) {
  std::string f = write("one.rules", kSwapReluAdd);
  EXPECT_TRUE(load({f}, {"swap-relu-add"}).transforms().empty());
  EXPECT_EQ(names(load({f}, {"swap-relu-add~rev"})), (std::vector<std::string>{"swap-relu-add"}));
  try {
    load({f}, {"swap-relu-add-rev"});
    FAIL() << "an unknown name was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--disable-rule swap-relu-add-rev: no rule of that name"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(OptLibrary, OneNameForTwoDifferentRulesIsAnErrorNamingBoth) {
  std::string a = write("a.rules", kSwapReluAdd);
  std::string b = write("b.rules", R"(

(equality swap-relu-add
  (tensors ?a ?b)
  (lhs (ewadd (sigmoid ?a) ?b))
  (rhs (ewadd ?b (sigmoid ?a))))
)");
  try {
    load({a, b});
    FAIL() << "a name standing for two rules was accepted";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'swap-relu-add' stands for two different rules"), std::string::npos) << msg;
    EXPECT_NE(msg.find(a + ":2"), std::string::npos) << msg;
    EXPECT_NE(msg.find(b + ":3"), std::string::npos) << msg;
  }
}

TEST_F(OptLibrary, AnEqualityStatedAgainUnderItsNameIsUsedOnce) {
  // The same equality, its variables renamed and its sides swapped: one statement.
  std::string a = write("a.rules", kSwapReluAdd);
  std::string b = write("b.rules", R"(
(equality swap-relu-add
  (tensors ?y ?x)
  (lhs (ewadd ?y (relu ?x)))
  (rhs (ewadd (relu ?x) ?y)))
)");
  RuleLibrary lib = load({a, b});
  EXPECT_EQ(lib.size(), 2u);
  EXPECT_EQ(lib.repeated(), 1u);
  EXPECT_TRUE(reporter_.warnings.empty());
}

rules::Rule parse_one(const std::string& text) {
  rules::RuleSet rs = rules::parse_rules(text, "t.rules");
  EXPECT_EQ(rs.rules.size(), 1u);
  return rs.rules.at(0);
}

TEST(OptLibraryNames, ContentNamesIgnoreVariableNamesOrientationAndOutputOrder) {
  std::string name = rules::content_name(parse_one(kSwapReluAdd));
  EXPECT_TRUE(rules::is_content_name(name)) << name;
  // Renamed and swapped: the same equality.
  EXPECT_EQ(rules::content_name(
                parse_one("(equality e (lhs (ewadd ?q (relu ?p))) (rhs (ewadd (relu ?p) ?q)))")),
            name);
  // Changed: another name (sigmoid for relu, or a swapped operand inside).
  EXPECT_NE(rules::content_name(parse_one(
                "(equality e (lhs (ewadd (sigmoid ?a) ?b)) (rhs (ewadd ?b (sigmoid ?a))))")),
            name);
  EXPECT_NE(rules::content_name(
                parse_one("(equality e (lhs (ewadd (relu ?a) ?b)) (rhs (ewadd (relu ?a) ?b)))")),
            name);
  // Two outputs in either order.
  std::string two = rules::content_name(parse_one(
      "(equality m (lhs (relu ?a) (sigmoid ?a)) (rhs (relu (relu ?a)) (sigmoid (relu ?a))))"));
  EXPECT_EQ(rules::content_name(parse_one(
                "(equality m (lhs (sigmoid ?b) (relu ?b)) (rhs (sigmoid (relu ?b)) (relu (relu "
                "?b))))")),
            two);
  // Conditions are part of the content.
  EXPECT_NE(rules::content_name(parse_one(
                "(equality e (where (= (dim ?a 0) (dim ?b 0))) (lhs (ewadd (relu ?a) ?b)) (rhs "
                "(ewadd ?b (relu ?a))))")),
            name);
}

TEST(OptLibraryNames, AContentNameThatIsNotItsContentsIsAnError) {
  rules::Rule r = parse_one(kSwapReluAdd);
  std::string right = rules::content_name(r);
  std::string wrong = right == "r-00000000" ? "r-00000001" : "r-00000000";
  std::string text = "(equality NAME (lhs (ewadd (relu ?a) ?b)) (rhs (ewadd ?b (relu ?a))))";
  auto with = [&](const std::string& n) {
    return std::string(text).replace(text.find("NAME"), 4, n);
  };
  EXPECT_EQ(rules::parse_rules(with(right), "t.rules").rules.at(0).name, right);
  try {
    rules::parse_rules(with(wrong), "t.rules");
    FAIL() << "a content name of other content was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("content name is " + right), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace graphsub::opt
