#pragma once
// A deterministic stand-in for a machine in optimizer tests: a fixed price per operator plus
// memory traffic, so fewer, larger operators are cheaper (what per-operator overhead does on
// a real machine), and results never depend on timings.
#include <string>

#include "ops/op_def.h"
#include "opt/cost/cost_model.h"

namespace graphsub::testutil {

class OverheadCost : public opt::CostModel {
 public:
  std::string name() const override { return "test"; }
  std::string assumptions() const override { return "10 per operator + 1 per KB"; }

 protected:
  double config_cost(const opt::OpConfig& c) override {
    return 10 + op_cost(*c.op, c.attrs, c.in, c.out).bytes / 1e3;
  }
};

}  // namespace graphsub::testutil
