// src/opt's stage folders include one way (docs/architecture.md): match below transforms and
// cost, which include nothing of each other, and search above all three. So a transform
// cannot see a cost model, and pricing and admission stay in the search.
#include <gtest/gtest.h>

#include "support/folder_layering.h"

namespace {

TEST(OptLayering, StageFoldersIncludeOnlyTheStagesBelowThem) {
  auto r = graphsub::testing::check_folder_layering(
      GRAPHSUB_SOURCE_DIR, "opt",
      {
          {"match", {"match"}},
          {"transforms", {"match", "transforms"}},
          {"cost", {"match", "cost"}},
          {"search", {"match", "transforms", "cost", "search"}},
      });
  EXPECT_TRUE(r.stray.empty()) << "outside src/opt's stage folders: " << r.stray[0];
  for (const auto& v : r.violations) ADD_FAILURE() << v;
  EXPECT_GT(r.files, 40u);
}

}  // namespace
