#pragma once
// The include check of a stage whose folders are layered (src/opt, src/onnx): every
// `#include "STAGE/FOLDER/..."` in a folder names a folder that folder may include.
#include <map>
#include <set>
#include <string>
#include <vector>

namespace graphsub::testing {

struct FolderLayering {
  std::vector<std::string> violations;  // "FILE (FOLDER) includes LINE"
  std::vector<std::string> stray;       // entries of the stage's folder that are no folder of it
  size_t files = 0;                     // files read
};

// `source_dir`: the checkout. `allowed`: each folder of src/STAGE and the folders it may include
// (itself among them). Plain files directly in src/STAGE are listed as stray unless named in
// `top_files`.
FolderLayering check_folder_layering(const std::string& source_dir, const std::string& stage,
                                     const std::map<std::string, std::set<std::string>>& allowed,
                                     const std::set<std::string>& top_files = {});

}  // namespace graphsub::testing
