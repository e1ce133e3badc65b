#pragma once
// The shipped rule library (rules/*.rules and the structural rules), loaded once for the test
// program, as the driver loads it once per job.
#include "opt/transforms/rule_library.h"

namespace graphsub::testutil {

const opt::RuleLibrary& shipped_library();
// Only the built-in structural rules.
const opt::RuleLibrary& builtin_library();

}  // namespace graphsub::testutil
