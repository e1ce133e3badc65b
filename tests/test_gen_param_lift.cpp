// Parameter lifting (src/gen/classify/param_lift.h): classes that differ only in one parameter's
// value, with a class for every declared value, become one rule with a parameter variable; lifts
// nest, and a form lifted in two domains is found whichever domain was lifted first.
#include <gtest/gtest.h>

#include <algorithm>

#include "gen/classify/param_lift.h"
#include "test_gen_util.h"

namespace graphsub::gen {
namespace {

using testing::eq;

ParamDomains padding_and_act() {
  ParamDomains d;
  d["padding"] = {std::string("same"), std::string("valid")};
  d["act"] = {std::string("none"), std::string("relu")};
  return d;
}

// (conv 1 P A ?x ?w) = (relu (conv 1 P A ?x ?w)) for the given (padding, act) pairs.
std::vector<Equality> grid(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<Equality> out;
  for (auto& [p, a] : pairs) {
    std::string conv = "(conv 1 " + p + " " + a + " ?x ?w)";
    Equality e = eq({conv}, {"(relu " + conv + ")"});
    canonicalize(e);
    out.push_back(e);
  }
  return out;
}

std::vector<Lift> lifts_of(const std::vector<Equality>& classes, int threads) {
  std::vector<const Equality*> ptrs;
  for (auto& e : classes) ptrs.push_back(&e);
  return find_lifts(ptrs, padding_and_act(), threads);
}

TEST(GenParamLift, AFullGridLiftsBothParametersAndCoversEveryClass) {
  std::vector<Equality> classes =
      grid({{"same", "none"}, {"same", "relu"}, {"valid", "none"}, {"valid", "relu"}});
  std::vector<Lift> lifts = lifts_of(classes, 2);
  // Two lifts in each domain, then one in both (reached from either side).
  ASSERT_EQ(lifts.size(), 5u);
  const Lift& top = lifts.front();  // most general first
  EXPECT_EQ(top.level, 2);
  EXPECT_NE(top.eq.key.find("?p_padding"), std::string::npos) << top.eq.key;
  EXPECT_NE(top.eq.key.find("?p_act"), std::string::npos) << top.eq.key;
  EXPECT_EQ(top.members, (std::vector<size_t>{0, 1, 2, 3}));
  for (size_t i = 1; i < lifts.size(); ++i) {
    EXPECT_EQ(lifts[i].level, 1);
    EXPECT_EQ(lifts[i].members.size(), 2u);
  }
  // The same lifts on one thread.
  std::vector<Lift> one = lifts_of(classes, 1);
  ASSERT_EQ(one.size(), lifts.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].eq.key, lifts[i].eq.key);
    EXPECT_EQ(one[i].members, lifts[i].members);
  }
}

TEST(GenParamLift, AMissingValueMeansNoLift) {
  // No (valid, relu): padding lifts only where act is none, act lifts only where padding is
  // same, and nothing is lifted in both.
  std::vector<Lift> lifts =
      lifts_of(grid({{"same", "none"}, {"same", "relu"}, {"valid", "none"}}), 2);
  ASSERT_EQ(lifts.size(), 2u);
  for (auto& l : lifts) {
    EXPECT_EQ(l.level, 1);
    bool lifts_padding = l.eq.key.find("?p_padding") != std::string::npos;
    bool lifts_act = l.eq.key.find("?p_act") != std::string::npos;
    EXPECT_NE(lifts_padding, lifts_act) << l.eq.key;
    EXPECT_NE(l.eq.key.find(lifts_padding ? " none " : " same "), std::string::npos) << l.eq.key;
  }
  // A single class lifts nowhere.
  EXPECT_TRUE(lifts_of(grid({{"same", "none"}}), 2).empty());
}

TEST(GenParamLift, LiftValueReplacesEveryOccurrenceInItsDomainOnly) {
  Equality e = eq({"(concat 1 (conv 1 same relu ?x ?w) (conv 1 valid relu ?y ?w))"},
                  {"(relu (concat 1 (conv 1 same none ?x ?w) (conv 1 valid none ?y ?w)))"});
  Equality l = lift_value(e, "act", AxiomParam(std::string("relu")));
  std::string lhs = rules::term_str(l.lhs[0]), rhs = rules::term_str(l.rhs[0]);
  EXPECT_EQ(lhs, "(concat 1 (conv 1 same ?p_act ?x ?w) (conv 1 valid ?p_act ?y ?w))");
  // The relu operator is not an act parameter; the none values are another value.
  EXPECT_EQ(rhs, "(relu (concat 1 (conv 1 same none ?x ?w) (conv 1 valid none ?y ?w)))");
}

}  // namespace
}  // namespace graphsub::gen
