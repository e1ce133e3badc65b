#pragma once
// A transform from a rule of the rule language: match the source pattern, instantiate the
// target with the match's bindings (rules/instantiate.h), replace each source output by the
// target output.
#include <memory>
#include <string>
#include <vector>

#include "opt/pattern.h"
#include "opt/target_memo.h"
#include "opt/transform.h"
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
  void apply(const GraphIndex& ix, const EmitFn& emit) const override;
  // Prices each application on a scratch copy of the graph (application_price.h) and builds
  // only those pricing.admit accepts. Candidates carry their match's number as ordinal.
  void apply_priced(const GraphIndex& ix, const Pricing& pricing,
                    const EmitFn& emit) const override;

  const rules::Rule& rule() const { return rule_; }

 private:
  void run(const GraphIndex& ix, const Pricing* pricing, const EmitFn& emit) const;
  rules::Bindings bindings(const Match& m) const;

  rules::Rule rule_;
  Pattern pattern_;
  mutable TargetMemo memo_;  // the target's instantiation per kind of binding
};

}  // namespace graphsub::opt
