#pragma once
// The rule jobs shared by the command line and the Python module: prove rules (verify), test
// the axioms on small instances (check-axioms), list the rules an optimization would use.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/report.h"
#include "opt/transforms/rule_library.h"
#include "rules/bounded_check.h"
#include "verify/verifier.h"

namespace graphsub::driver {

struct VerifyJobOptions {
  std::string file;    // rule file, or a label for `text`
  std::string text;    // rule text to verify instead of reading `file` ("": read the file)
  std::string axioms;  // "": specs/operators.axioms
  unsigned timeout_ms = 10000;
  unsigned rlimit = 0;
  int threads = 0;  // 0: all cores
  bool numeric = true;
  bool reuse_context = false;
  bool count_resources = false;  // Z3's resource count per rule (verify --times)
};

struct VerifyJobResult {
  std::string file;  // what was verified (the file, or the label of the text)
  std::vector<verify::RuleVerdict> verdicts;
  size_t proved() const;
};

// Throws OptionError for bad options, Error for unreadable or malformed files.
VerifyJobResult run_verify_job(const VerifyJobOptions& o, Reporter& rep);

struct AxiomCheckJobOptions {
  std::string axioms;             // "": specs/operators.axioms
  std::vector<std::string> only;  // test only these axioms (an unknown name is an Error)
  int threads = 0;
  uint64_t seed = 1;
};

struct AxiomCheckJobResult {
  std::string file;
  rules::AxiomCheckReport report;
  size_t false_count() const;
};

AxiomCheckJobResult run_check_axioms_job(const AxiomCheckJobOptions& o, Reporter& rep);

// One rule of a library: its name, where it comes from ("FILE:LINE" or "built-in") and its
// text in the rule language ("" for built-in rules, which are C++).
struct RuleListing {
  std::string name, origin, text;
};
std::vector<RuleListing> list_rules(const opt::RuleLibrary& lib);

// Threads for the rule jobs: 0 (all cores) up to max_threads(); throws OptionError.
void check_threads(const char* flag, int threads);

}  // namespace graphsub::driver
