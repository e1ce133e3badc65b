#include "opt/transforms/rule_library.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

#include "core/error.h"
#include "opt/transforms/rule_transform.h"
#include "opt/transforms/structural_rules.h"
#include "rules/orientations.h"
#include "rules/rule_parser.h"

namespace graphsub::opt {

namespace {

std::string place(const rules::Rule& r) {
  return fmt::format("{}:{}", r.loc.file, r.loc.line);
}

}  // namespace

RuleLibrary::RuleLibrary(const RuleLibraryOptions& opts, Reporter& reporter)
    : files_(opts.rule_files) {
  // Domains of parameters are declared with the axioms; rule files use them when present.
  std::optional<rules::RuleSet> axioms;
  if (!opts.axioms_file.empty()) axioms = rules::load_rules(opts.axioms_file);
  std::set<std::string> disabled(opts.disabled.begin(), opts.disabled.end());
  std::set<std::string> known;
  auto add = [&](std::unique_ptr<const Transform> t, const std::string& statement) {
    known.insert(t->name());
    if (!disabled.count(t->name()) && !disabled.count(statement)) owned_.push_back(std::move(t));
  };
  // Each name stands for one statement (its content key) at the place it was first read.
  struct Stated {
    std::string key, place;
  };
  std::map<std::string, Stated> stated;
  for (auto& f : files_) {
    rules::RuleSet rs = rules::load_rules(f, axioms ? &*axioms : nullptr);
    for (auto& r : rs.rules) {
      std::string key = rules::content_key(r);
      auto [it, fresh] = stated.try_emplace(r.name, Stated{key, place(r)});
      if (!fresh && it->second.key != key)
        throw Error(fmt::format("rule name '{}' stands for two different rules: {} and {}", r.name,
                                it->second.place, place(r)));
      known.insert(r.name);
      if (!fresh) {
        ++repeated_;
        continue;
      }
      for (auto& o : rules::orientations(r)) {
        std::string name = o.name;
        try {
          add(std::make_unique<RuleTransform>(std::move(o)), r.name);
        } catch (const Error& e) {
          known.insert(name);
          ++skipped_;
          reporter.warn(fmt::format("{}: rule '{}' skipped: {}", f, name, e.what()));
        }
      }
    }
  }
  if (opts.builtin)
    for (auto& t : structural_transforms()) {
      std::string name = t->name();
      add(std::move(t), name);
    }
  for (auto& d : disabled)
    if (!known.count(d)) throw Error(fmt::format("--disable-rule {}: no rule of that name", d));
}

std::vector<const Transform*> RuleLibrary::transforms() const {
  std::vector<const Transform*> t;
  for (auto& p : owned_) t.push_back(p.get());
  return t;
}

}  // namespace graphsub::opt
