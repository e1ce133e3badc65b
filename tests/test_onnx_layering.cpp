// src/onnx's folders include one way (docs/architecture.md): format (the file format: model
// files, tensors, attributes, operator versions, half types) below everything; the shape
// evaluator on format alone; import on both; export on format alone. Import and export know
// nothing of each other; what they share is onnx/onnx_model.h, the stage's one public header.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "support/folder_layering.h"

namespace {

namespace fs = std::filesystem;

TEST(OnnxLayering, FoldersIncludeOnlyTheFoldersBelowThem) {
  auto r =
      graphsub::testing::check_folder_layering(GRAPHSUB_SOURCE_DIR, "onnx",
                                               {
                                                   {"format", {"format"}},
                                                   {"evaluate", {"format", "evaluate"}},
                                                   {"import", {"format", "evaluate", "import"}},
                                                   {"export", {"format", "export"}},
                                               },
                                               {"onnx_model.h"});
  EXPECT_TRUE(r.stray.empty()) << "outside src/onnx's folders: " << r.stray[0];
  for (const auto& v : r.violations) ADD_FAILURE() << v;
  EXPECT_GT(r.files, 30u);
}

TEST(OnnxLayering, OtherStagesIncludeOnlyThePublicHeader) {
  // Every other stage reads and writes ONNX through onnx/onnx_model.h alone.
  const std::regex include(R"re(#include "onnx/([a-z_/.]+)")re");
  size_t seen = 0;
  for (const char* top : {"src", "python"}) {
    for (const auto& file : fs::recursive_directory_iterator(fs::path(GRAPHSUB_SOURCE_DIR) / top)) {
      if (!file.is_regular_file()) continue;
      std::string path = file.path().string();
      if (path.find("/src/onnx/") != std::string::npos) continue;
      std::ifstream in(file.path());
      std::string line;
      while (std::getline(in, line)) {
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        ++seen;
        EXPECT_EQ(m[1].str(), "onnx_model.h") << path << " includes " << line;
      }
    }
  }
  EXPECT_GT(seen, 0u);  // the driver, the ONNX Runtime target and the bindings read models
}

}  // namespace
