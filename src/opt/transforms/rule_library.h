#pragma once
// The transforms a search uses: rules from rule files (each rule a RuleTransform; each
// equality one per usable direction, rules/orientations.h) and the built-in structural rules,
// minus the ones disabled by name. Loaded once by the caller (src/driver) and passed to
// optimize_graph.
#include <memory>
#include <string>
#include <vector>

#include "ir/report.h"
#include "opt/transforms/transform.h"

namespace graphsub::opt {

struct RuleLibraryOptions {
  // Rule files, as the caller resolved them (the driver's data_paths.h names the shipped
  // ones when none are given).
  std::vector<std::string> rule_files;
  // The axioms file whose domains the rule files' parameters use ("": none).
  std::string axioms_file;
  bool builtin = true;  // the structural rules (structural_rules.h)
  // Rule names; an equality's name disables both its directions, NAME~rev the right-to-left
  // one alone. An unknown name is an error.
  std::vector<std::string> disabled;
};

class RuleLibrary {
 public:
  // Throws Error for unreadable or malformed rule files, for one name given to two different
  // equalities or rules (naming both places), and for unknown disabled names. An equality
  // stated again under its name (the same content, e.g. in two generated libraries) is used
  // once. Rules that cannot drive a rewrite (e.g. an operator outside the language) are
  // skipped with a warning through `reporter`.
  RuleLibrary(const RuleLibraryOptions& opts, Reporter& reporter);

  std::vector<const Transform*> transforms() const;
  size_t size() const { return owned_.size(); }
  const std::vector<std::string>& files() const { return files_; }
  size_t skipped() const { return skipped_; }
  // Equalities and rules stated more than once (same name, same content): used once.
  size_t repeated() const { return repeated_; }

 private:
  std::vector<std::unique_ptr<const Transform>> owned_;
  std::vector<std::string> files_;
  size_t skipped_ = 0, repeated_ = 0;
};

}  // namespace graphsub::opt
