#include "opt/rule_library.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "ir/error.h"
#include "opt/rule_transform.h"
#include "opt/structural_rules.h"
#include "rules/rule_parser.h"

namespace graphsub::opt {

std::vector<std::string> default_rule_files() {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const char* rel : {"rules/default.rules", "rules/merges.rules", "rules/activations.rules"}) {
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

namespace {

// The transforms of one rule file, and the warnings about the rules it skipped.
struct LoadedFile {
  std::vector<std::shared_ptr<const Transform>> transforms;
  std::vector<std::string> skipped_names, warnings;
};

// Identity of a file's contents as far as the file system tells: path, size, modification time.
std::string file_stamp(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) return {};
  auto time = fs::last_write_time(path, ec);
  if (ec) return {};
  return fmt::format("{}|{}|{}", path, size, time.time_since_epoch().count());
}

LoadedFile load_file(const std::string& f, const rules::RuleSet* axioms) {
  LoadedFile out;
  rules::RuleSet rs = rules::load_rules(f, axioms);
  for (auto& r : rs.rules) {
    std::string name = r.name;
    try {
      out.transforms.push_back(std::make_shared<RuleTransform>(std::move(r)));
    } catch (const Error& e) {
      out.skipped_names.push_back(name);
      out.warnings.push_back(fmt::format("{}: rule '{}' skipped: {}", f, name, e.what()));
    }
  }
  return out;
}

// Rule files parsed so far in this process, by file and axioms stamps. Only looked up.
std::shared_ptr<const LoadedFile> cached_file(const std::string& f) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const LoadedFile>> cache;
  std::string ap = rules::default_axioms_path();
  std::string stamp = file_stamp(f);
  std::string key = stamp + "#" + file_stamp(ap);
  std::lock_guard lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  // Domains of parameters are declared with the axioms; rule files use them when present.
  std::optional<rules::RuleSet> axioms;
  if (std::filesystem::exists(ap)) axioms = rules::load_rules(ap);
  auto loaded = std::make_shared<const LoadedFile>(load_file(f, axioms ? &*axioms : nullptr));
  if (!stamp.empty()) cache[key] = loaded;  // an unreadable file threw above
  return loaded;
}

}  // namespace

RuleLibrary::RuleLibrary(const RuleLibraryOptions& opts, Reporter& reporter) {
  files_ = opts.rule_files.empty() ? default_rule_files() : opts.rule_files;
  std::set<std::string> disabled(opts.disabled.begin(), opts.disabled.end());
  std::set<std::string> known;
  auto add = [&](std::shared_ptr<const Transform> t) {
    known.insert(t->name());
    if (!disabled.count(t->name())) owned_.push_back(std::move(t));
  };
  for (auto& f : files_) {
    auto loaded = cached_file(f);
    for (auto& t : loaded->transforms) add(t);
    skipped_ += loaded->skipped_names.size();
    known.insert(loaded->skipped_names.begin(), loaded->skipped_names.end());
    for (auto& w : loaded->warnings) reporter.warn(w);
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
