#include "opt/rule_library.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "ir/error.h"
#include "opt/rule_transform.h"
#include "opt/structural_rules.h"
#include "rules/rule_parser.h"

namespace graphsub::opt {

std::vector<std::string> default_rule_files() {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const char* rel : {"rules/default.rules", "rules/merges.rules"}) {
    if (fs::exists(rel)) {
      files.push_back(rel);
      continue;
    }
#ifdef GRAPHSUB_SOURCE_DIR_FOR_RULES
    std::string in_tree = std::string(GRAPHSUB_SOURCE_DIR_FOR_RULES) + "/" + rel;
    if (fs::exists(in_tree)) files.push_back(in_tree);
#endif
  }
  return files;
}

RuleLibrary::RuleLibrary(const RuleLibraryOptions& opts, Reporter& reporter) {
  files_ = opts.rule_files.empty() ? default_rule_files() : opts.rule_files;
  // Domains of parameters are declared with the axioms; rule files use them when present.
  std::optional<rules::RuleSet> axioms;
  if (std::string ap = rules::default_axioms_path(); std::filesystem::exists(ap))
    axioms = rules::load_rules(ap);
  std::set<std::string> disabled(opts.disabled.begin(), opts.disabled.end());
  std::set<std::string> known;
  auto add = [&](std::unique_ptr<Transform> t) {
    known.insert(t->name());
    if (!disabled.count(t->name())) owned_.push_back(std::move(t));
  };
  for (auto& f : files_) {
    rules::RuleSet rs = rules::load_rules(f, axioms ? &*axioms : nullptr);
    for (auto& r : rs.rules) {
      std::string name = r.name;
      try {
        add(std::make_unique<RuleTransform>(std::move(r)));
      } catch (const Error& e) {
        ++skipped_;
        known.insert(name);
        reporter.warn(fmt::format("{}: rule '{}' skipped: {}", f, name, e.what()));
      }
    }
  }
  if (opts.builtin)
    for (auto& t : structural_transforms()) add(std::move(t));
  for (auto& d : disabled)
    if (!known.count(d)) throw Error(fmt::format("--disable-rule {}: no rule of that name", d));
}

std::vector<const Transform*> RuleLibrary::transforms() const {
  std::vector<const Transform*> t;
  for (auto& p : owned_) t.push_back(p.get());
  return t;
}

}  // namespace graphsub::opt
