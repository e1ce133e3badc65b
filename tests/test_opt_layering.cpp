// src/opt's stage folders include one way (docs/architecture.md): match below transforms and
// cost, which include nothing of each other, and search above all three. So a transform
// cannot see a cost model, and pricing and admission stay in the search.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace {

namespace fs = std::filesystem;

TEST(OptLayering, StageFoldersIncludeOnlyTheStagesBelowThem) {
  const std::map<std::string, std::set<std::string>> allowed = {
      {"match", {"match"}},
      {"transforms", {"match", "transforms"}},
      {"cost", {"match", "cost"}},
      {"search", {"match", "transforms", "cost", "search"}},
  };
  const fs::path opt = fs::path(GRAPHSUB_SOURCE_DIR) / "src" / "opt";
  const std::regex include(R"(#include "opt/([a-z_]+)/)");
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(opt)) {
    const std::string stage = entry.path().filename().string();
    ASSERT_TRUE(entry.is_directory()) << entry.path() << " lies outside src/opt's stage folders";
    ASSERT_TRUE(allowed.count(stage)) << "src/opt/" << stage << " is no stage of the layering";
    for (const auto& file : fs::directory_iterator(entry.path())) {
      std::ifstream in(file.path());
      std::string line;
      while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        EXPECT_TRUE(allowed.at(stage).count(m[1].str()))
            << file.path() << " (" << stage << ") includes " << line;
      }
      ++files;
    }
  }
  EXPECT_GT(files, 40u);
}

}  // namespace
