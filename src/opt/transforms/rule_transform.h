#pragma once
// A transform from a rule of the rule language: match the source pattern, instantiate the
// target with the match's bindings (rules/instantiate.h), replace each source output by the
// target output.
#include <memory>
#include <string>
#include <vector>

#include "opt/match/pattern.h"
#include "opt/transforms/target_memo.h"
#include "opt/transforms/transform.h"
#include "rules/instantiate.h"
#include "rules/rule.h"

namespace graphsub::opt {

class RuleTransform : public Transform {
 public:
  // Throws Error when the rule cannot be used for rewriting (unknown operator, a source
  // output that is a bare variable, a target parameter the source does not bind).
  explicit RuleTransform(rules::Rule rule);

  const std::string& name() const override { return rule_.name; }
  std::string origin() const override;
  // The source pattern's matches (pattern.h).
  size_t find(const GraphIndex& ix, std::vector<Match>& out) const override;
  // The target instantiated with the match's bindings, each source output replaced by the
  // target's; a target that does not type-check is a failed match with the type error. A
  // binding seen before (by types, sharing and parameter values) replays the recorded nodes.
  Outcome apply(const GraphIndex& ix, const Match& m, Builder& b) const override;
  std::string where(const GraphIndex& ix, const Match& m) const override;

  const rules::Rule& rule() const { return rule_; }

 private:
  rules::Bindings bindings(const Match& m) const;

  rules::Rule rule_;
  Pattern pattern_;
  mutable TargetMemo memo_;  // the target's instantiation per kind of binding
};

}  // namespace graphsub::opt
