// The one bisection to the first bad rewrite (opt/bisect.h): a deliberately false rule mixed
// with sound ones is named, at the same step a check of every prefix finds; sound rewrites
// name nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "check/equivalence.h"
#include "ir/builder.h"
#include "opt/search/bisect.h"
#include "opt/transforms/rule_library.h"
#include "opt/search/search.h"
#include "support/overhead_cost.h"

namespace graphsub::opt {
namespace {

using testutil::OverheadCost;

// Two conv + batchnorm + relu blocks and a tanh: the built-in rules fold and fuse them.
Graph blocks() {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 6, 6});
  auto h = b.relu(b.batchnorm(b.conv(x, b.weight("w1", {4, 4, 3, 3}), {.pad = 1}), "bn1"));
  h = b.relu(b.batchnorm(b.conv(h, b.weight("w2", {4, 4, 3, 3}), {.pad = 1}), "bn2"));
  b.output("y", b.op("tanh", {h}));
  return b.finish();
}

// The built-in structural rules and those of `rule_text` (from a file of its own).
RuleLibrary library_with(const std::string& name, const std::string& rule_text) {
  auto p = std::filesystem::temp_directory_path() / ("graphsub-bisect-" + name + ".rules");
  std::ofstream(p) << rule_text;
  RuleLibraryOptions o;
  o.rule_files = {p.string()};
  return RuleLibrary(o, null_reporter());
}

TEST(OptBisect, NamesTheFalseRuleAtTheFirstFailingPrefix) {
  Graph g = blocks();
  RuleLibrary lib =
      library_with("false",
                   "(rule drop-tanh \"false: tanh is not the identity\" (tensors ?x)\n"
                   "  (source (tanh ?x)) (target ?x))\n");
  OverheadCost cost;
  SearchResult r = search(g, lib.transforms(), cost, {.alpha = 1.0, .budget = 50}, null_reporter());
  ASSERT_GE(r.steps.size(), 2u);  // sound rewrites besides the false one
  auto bad = first_bad_application(g, lib.transforms(), r.steps, {});
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(r.steps[*bad].rule, "drop-tanh");
  EXPECT_GT(*bad, 0u) << "a sound rewrite came first: the bisection searched a real prefix";
  EXPECT_EQ(describe_step(r.steps[*bad]), "drop-tanh at " + r.steps[*bad].where);
  // The same step a check of every prefix finds.
  auto graphs = replay_steps(g, lib.transforms(), r.steps, r.steps.size());
  size_t first = 0;
  while (first < graphs.size() && check_equivalent(g, graphs[first]).ok) ++first;
  EXPECT_EQ(*bad, first);
}

TEST(OptBisect, SoundRewritesNameNothing) {
  Graph g = blocks();
  RuleLibrary lib = library_with("sound", "; no rules besides the built-in ones\n");
  OverheadCost cost;
  SearchResult r = search(g, lib.transforms(), cost, {.alpha = 1.0, .budget = 50}, null_reporter());
  ASSERT_FALSE(r.steps.empty());
  EXPECT_FALSE(first_bad_application(g, lib.transforms(), r.steps, {}).has_value());
  EXPECT_FALSE(first_bad_application(g, lib.transforms(), {}, {}).has_value());
}

}  // namespace
}  // namespace graphsub::opt
