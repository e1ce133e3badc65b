// The rule library: a rule file is parsed once per process (the same transforms come back for
// the same file), a changed file is read again, and disabled rules are left out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ir/error.h"
#include "opt/rule_library.h"

namespace graphsub::opt {
namespace {

class CountingReporter : public Reporter {
 public:
  std::vector<std::string> warnings;
  void warn(std::string_view line) override { warnings.emplace_back(line); }
};

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

const char* kTwoRules = R"(
(rule swap-add
  (tensors ?a ?b)
  (source (ewadd ?a ?b))
  (target (ewadd ?b ?a)))
(rule swap-mul
  (tensors ?a ?b)
  (source (ewmul ?a ?b))
  (target (ewmul ?b ?a)))
)";

TEST(OptLibrary, FilesAreParsedOncePerProcessAndReadAgainWhenChanged) {
  auto dir = std::filesystem::temp_directory_path() / "graphsub_test_opt_library";
  std::filesystem::create_directories(dir);
  std::string path = (dir / "two.rules").string();
  write(path, kTwoRules);
  RuleLibraryOptions o;
  o.rule_files = {path};
  o.builtin = false;
  CountingReporter r1, r2;
  RuleLibrary a(o, r1), b(o, r2);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(a.skipped(), 0u);
  EXPECT_TRUE(r1.warnings.empty());
  EXPECT_EQ(a.transforms()[0], b.transforms()[0]);  // the same parsed transforms
  EXPECT_EQ(a.transforms()[1], b.transforms()[1]);

  o.disabled = {"swap-add"};
  CountingReporter r3;
  RuleLibrary d(o, r3);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d.transforms()[0]->name(), "swap-mul");
  o.disabled = {"no-such-rule"};
  EXPECT_THROW(RuleLibrary(o, r3), Error);
  o.disabled.clear();

  // A different file at the same path (other size) is parsed again.
  write(path, std::string(kTwoRules) + "\n; changed\n");
  CountingReporter r4;
  RuleLibrary c(o, r4);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_NE(c.transforms()[0], a.transforms()[0]);
  EXPECT_EQ(c.transforms()[0]->name(), "swap-add");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace graphsub::opt
