// The optimizer's own rule files are proved by the verifier from the axioms:
// rules/merges.rules and rules/activations.rules (loaded by default) and rules/structural.rules
// (the rule-language forms of the built-in structural rules).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "driver/data_paths.h"
#include "opt/transforms/rule_library.h"
#include "rules/orientations.h"
#include "rules/rule_parser.h"
#include "rules/rule_printer.h"
#include "verify/verifier.h"

namespace graphsub {
namespace {

rules::RuleSet load(const std::string& file, const rules::RuleSet& axioms) {
  return rules::load_rules(std::string(GRAPHSUB_SOURCE_DIR) + "/" + file, &axioms);
}

void expect_all_proved(const std::string& file, size_t at_least) {
  auto axioms = rules::load_rules(driver::shipped_axioms());
  auto rs = load(file, axioms);
  ASSERT_GE(rs.rules.size(), at_least) << file;
  verify::VerifyOptions opts;
  opts.threads = 2;
  verify::Verifier v(axioms, opts);
  std::vector<rules::Rule> statements;
  for (const auto& r : rs.rules) statements.push_back(rules::statement(r));
  auto verdicts = v.verify_all(statements);
  for (auto& r : verdicts)
    EXPECT_TRUE(r.proved()) << file << ": " << r.name << ": " << verify::verdict_name(r.verdict)
                            << " " << r.reason;
}

TEST(OptRules, MergesAreProved) {
  expect_all_proved("rules/merges.rules", 2);
}

TEST(OptRules, StructuralRulesAreProved) {
  expect_all_proved("rules/structural.rules", 8);
}

// The library generated over the activations of modern networks has rules with each of them,
// among them the fusion of relu6 into a convolution, and the optimizer loads it by default.
// Rule names are not relied on: generated names may change.
constexpr const char* kNewOps[] = {"(relu6 ",       "(hardswish ",  "(silu ", "(clip ",
                                   "(hardsigmoid ", "(leaky_relu ", "(pow ",  "(prelu "};
TEST(OptRules, ActivationRulesNameEachNewOperatorAndAreProved) {
  auto axioms = rules::load_rules(driver::shipped_axioms());
  auto rs = load("rules/activations.rules", axioms);
  std::map<std::string, int> with;
  bool conv_fusion = false;
  for (const auto& equality : rs.rules) {
    // The fusion is the equality's left-to-right or right-to-left direction.
    for (const auto& r : rules::orientations(equality)) {
      std::string text = rules::rule_str(r);
      for (const char* op : kNewOps)
        if (text.find(op) != std::string::npos) ++with[op];
      if (r.source.size() == 1 &&
          rules::term_str(r.source[0]) == "(relu6 (conv ?p_stride ?p_padding none ?a ?b))" &&
          rules::term_str(r.target[0]) == "(conv ?p_stride ?p_padding relu6 ?a ?b)")
        conv_fusion = true;
    }
  }
  for (const char* op : kNewOps) EXPECT_GT(with[op], 10) << op;
  EXPECT_TRUE(conv_fusion);
  auto files = driver::shipped_rule_files();
  EXPECT_TRUE(std::any_of(files.begin(), files.end(), [](const std::string& f) {
    return f.ends_with("rules/activations.rules");
  }));
  expect_all_proved("rules/activations.rules", 150);  // 185 equalities
}

}  // namespace
}  // namespace graphsub
