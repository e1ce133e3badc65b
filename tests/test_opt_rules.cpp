// The optimizer's own rule files are proved by the verifier from the axioms:
// rules/merges.rules (loaded by default) and rules/structural.rules (the rule-language forms of
// the built-in structural rules).
#include <gtest/gtest.h>

#include "rules/rule_parser.h"
#include "verify/verifier.h"

namespace graphsub {
namespace {

void expect_all_proved(const std::string& file, size_t at_least) {
  auto axioms = rules::load_rules(rules::default_axioms_path());
  auto rs = rules::load_rules(std::string(GRAPHSUB_SOURCE_DIR) + "/" + file, &axioms);
  ASSERT_GE(rs.rules.size(), at_least) << file;
  verify::VerifyOptions opts;
  opts.threads = 2;
  verify::Verifier v(axioms, opts);
  auto verdicts = v.verify_all(rs.rules);
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

}  // namespace
}  // namespace graphsub
