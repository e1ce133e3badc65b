// The layering of docs/architecture.md, checked: its table of folders says which stages each
// one uses ("uses", the stages directly below it; it may include those and everything below
// them). No source under src/ or python/ may include a folder that is not below its own, and
// no stage library may link one (the links come from build/stage_libraries.txt, which
// CMakeLists.txt writes). The table is the one statement of the rule; this test reads it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace graphsub {
namespace {

namespace fs = std::filesystem;

// Folder (as written in includes: "ir", "gen"; "python" for python/) -> the folders it uses.
using Layers = std::map<std::string, std::vector<std::string>>;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  const char* ws = " \t`";
  s.erase(0, s.find_first_not_of(ws));
  s.erase(s.find_last_not_of(ws) + 1);
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);) out.push_back(trim(item));
  return out;
}

// The rows of the markdown table whose header has the columns "folder" and "uses"; a folder
// is written `src/ir` (or `python`), its uses as a comma-separated list of folders, or "–".
Layers parse_layers(const std::string& markdown) {
  Layers layers;
  int folder_col = -1, uses_col = -1;
  std::stringstream ss(markdown);
  for (std::string line; std::getline(ss, line);) {
    if (line.rfind("|", 0) != 0) {
      folder_col = uses_col = -1;  // a table ends at the first line that is not a row
      continue;
    }
    std::vector<std::string> cells = split(line.substr(1), '|');
    if (folder_col < 0) {
      for (size_t i = 0; i < cells.size(); ++i) {
        if (cells[i] == "folder") folder_col = static_cast<int>(i);
        if (cells[i] == "uses") uses_col = static_cast<int>(i);
      }
      if (uses_col < 0) folder_col = -1;
      continue;
    }
    if (static_cast<int>(cells.size()) <= std::max(folder_col, uses_col)) continue;
    std::string folder = cells[static_cast<size_t>(folder_col)];
    if (folder.rfind("src/", 0) == 0) folder = folder.substr(4);
    if (folder.empty() || folder.find_first_of("-:") != std::string::npos) continue;  // |---|
    std::vector<std::string>& uses = layers[folder];
    for (auto& u : split(cells[static_cast<size_t>(uses_col)], ','))
      if (!u.empty() && u != "–" && u != "-") uses.push_back(u);
  }
  return layers;
}

// Every folder below `folder` (what it uses, and what those use, ...).
std::set<std::string> below(const Layers& layers, const std::string& folder) {
  std::set<std::string> seen;
  std::vector<std::string> todo = {folder};
  while (!todo.empty()) {
    std::string f = todo.back();
    todo.pop_back();
    auto it = layers.find(f);
    if (it == layers.end()) continue;
    for (auto& u : it->second)
      if (seen.insert(u).second) todo.push_back(u);
  }
  return seen;
}

// One include of another folder that the table does not put below the includer.
struct Violation {
  std::string file;  // relative to the source root, with the line: "src/ir/graph.h:12"
  std::string text;  // the include line
};

// The violations in one source file of folder `folder`; includes of paths whose first
// component is no folder of the table (system headers, "interruptible.h") are not ours.
std::vector<Violation> upward_includes(const Layers& layers, const std::string& folder,
                                       const std::string& file, const std::string& source) {
  static const std::regex include_re(R"(^\s*#\s*include\s*"([A-Za-z0-9_]+)/)");
  std::vector<Violation> out;
  std::set<std::string> allowed = below(layers, folder);
  std::stringstream ss(source);
  int line_no = 0;
  for (std::string line; std::getline(ss, line);) {
    ++line_no;
    std::smatch m;
    if (line.find("include") == std::string::npos || !std::regex_search(line, m, include_re))
      continue;
    std::string target = m[1];
    if (target == folder || !layers.count(target) || allowed.count(target)) continue;
    out.push_back({file + ":" + std::to_string(line_no), line});
  }
  return out;
}

std::string describe(const std::vector<Violation>& vs) {
  std::string s;
  for (auto& v : vs) s += "  " + v.file + ": " + v.text + "\n";
  return s;
}

const fs::path kRoot = GRAPHSUB_SOURCE_DIR;

Layers project_layers() {
  return parse_layers(read_file(kRoot / "docs/architecture.md"));
}

TEST(Layering, TableNamesEveryFolderUnderSrcAndNoOther) {
  Layers layers = project_layers();
  ASSERT_FALSE(layers.empty()) << "no table with columns folder and uses in docs/architecture.md";
  std::set<std::string> on_disk = {"python"};
  for (auto& e : fs::directory_iterator(kRoot / "src"))
    if (e.is_directory()) on_disk.insert(e.path().filename().string());
  std::set<std::string> in_table;
  for (auto& [folder, uses] : layers) in_table.insert(folder);
  EXPECT_EQ(in_table, on_disk);
  for (auto& [folder, uses] : layers)
    for (auto& u : uses) EXPECT_TRUE(layers.count(u)) << folder << " uses unknown folder " << u;
}

TEST(Layering, TableHasNoCycle) {
  Layers layers = project_layers();
  for (auto& [folder, uses] : layers)
    EXPECT_FALSE(below(layers, folder).count(folder)) << folder << " is below itself";
}

TEST(Layering, NoSourceIncludesAFolderAboveItsOwn) {
  Layers layers = project_layers();
  std::vector<Violation> found;
  size_t files = 0;
  for (auto& [folder, uses] : layers) {
    fs::path dir = folder == "python" ? kRoot / "python" : kRoot / "src" / folder;
    for (auto& e : fs::recursive_directory_iterator(dir)) {
      std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      ++files;
      std::string rel = fs::relative(e.path(), kRoot).string();
      for (auto& v : upward_includes(layers, folder, rel, read_file(e.path()))) found.push_back(v);
    }
  }
  EXPECT_GT(files, 100u);
  EXPECT_TRUE(found.empty()) << "includes up the layering of docs/architecture.md:\n"
                             << describe(found);
}

TEST(Layering, StageLibrariesLinkOnlyStagesBelowThem) {
  Layers layers = project_layers();
  // library | folders | dependencies, one line per stage (CMakeLists.txt, graphsub_stage).
  std::string text = read_file(fs::path(GRAPHSUB_BINARY_DIR) / "stage_libraries.txt");
  std::map<std::string, std::vector<std::string>> dirs_of, deps_of;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    std::vector<std::string> cols = split(line, '|');
    if (cols.size() != 3) continue;
    dirs_of[cols[0]] = split(cols[1], ' ');
    deps_of[cols[0]] = split(cols[2], ' ');
  }
  ASSERT_GT(dirs_of.size(), 10u) << "build/stage_libraries.txt lists too few stages";
  for (auto& [lib, dirs] : dirs_of)
    for (auto& dir : dirs) {
      ASSERT_TRUE(layers.count(dir)) << lib << " builds folder " << dir << ", not in the table";
      std::set<std::string> allowed = below(layers, dir);
      for (auto& dep : deps_of[lib]) {
        auto it = dirs_of.find(dep);
        if (it == dirs_of.end()) continue;  // an external library
        for (auto& dep_dir : it->second)
          EXPECT_TRUE(allowed.count(dep_dir))
              << lib << " (src/" << dir << ") links " << dep << " (src/" << dep_dir
              << "), which docs/architecture.md does not put below it";
      }
    }
}

// The checks themselves, on a made-up table: an include down the layers passes, one up fails.
TEST(Layering, CheckFindsAnIncludeUpTheLayers) {
  Layers layers = parse_layers(
      "| folder | library | uses |\n"
      "|---|---|---|\n"
      "| `src/core` | c | – |\n"
      "| `src/ir` | i | core |\n"
      "| `src/opt` | o | ir |\n");
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(below(layers, "opt"), (std::set<std::string>{"ir", "core"}));
  std::string source =
      "#include <vector>\n"
      "#include \"core/error.h\"\n"
      "#include \"ir/graph.h\"\n"
      "#include \"opt/optimize.h\"\n"
      "#include \"local.h\"\n";
  EXPECT_TRUE(upward_includes(layers, "opt", "src/opt/a.cpp", source).empty());
  std::vector<Violation> v = upward_includes(layers, "ir", "src/ir/a.cpp", source);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].file, "src/ir/a.cpp:4");
  EXPECT_EQ(v[0].text, "#include \"opt/optimize.h\"");
}

}  // namespace
}  // namespace graphsub
