#pragma once
// The transforms a search uses: rules from rule files (each becomes a RuleTransform) and the
// built-in structural rules, minus the ones disabled by name.
#include <memory>
#include <string>
#include <vector>

#include "ir/report.h"
#include "opt/transform.h"

namespace graphsub::opt {

struct RuleLibraryOptions {
  std::vector<std::string> rule_files;  // empty: default_rule_files()
  bool builtin = true;                  // the structural rules (structural_rules.h)
  std::vector<std::string> disabled;    // rule names; an unknown name is an error
};

class RuleLibrary {
 public:
  // Throws Error for unreadable or malformed rule files and unknown disabled names. Rules
  // that cannot drive a rewrite (e.g. a target parameter the source does not bind) are
  // skipped with a warning through `reporter`.
  // Rule files are parsed once per process: a file read before (same path, size and
  // modification time, same axioms) gives the same transforms again, shared.
  RuleLibrary(const RuleLibraryOptions& opts, Reporter& reporter);

  std::vector<const Transform*> transforms() const;
  size_t size() const { return owned_.size(); }
  const std::vector<std::string>& files() const { return files_; }
  size_t skipped() const { return skipped_; }

 private:
  std::vector<std::shared_ptr<const Transform>> owned_;
  std::vector<std::string> files_;
  size_t skipped_ = 0;
};

// rules/default.rules (generated), rules/merges.rules and rules/activations.rules (generated
// over the activations of modern networks), each from the working directory,
// else from the source tree, when it exists.
std::vector<std::string> default_rule_files();

}  // namespace graphsub::opt
