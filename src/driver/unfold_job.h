#pragma once
// `graphsub unfold`: the rules that introduce fused operators, generated from the axioms that
// define them (gen/unfold/unfold.h), each proved by the verifier, written as a rule library
// whose header states the command that reproduces it.
#include <string>
#include <vector>

#include "gen/unfold/unfold.h"
#include "ir/report.h"

namespace graphsub::driver {

struct UnfoldJobOptions {
  std::vector<std::string> terms;  // the fused terms (repeatable --term)
  std::string unfold;              // comma-separated defining axioms
  std::string via;                 // comma-separated axioms that vary the forms ("": none)
  int depth = 2;
  std::string axioms;   // "": specs/operators.axioms
  std::string output;   // "": keep the text only
  unsigned rlimit = 0;  // 0: gen::kDefaultRlimit
  unsigned timeout_ms = 300'000;
  int threads = 0;  // 0: all cores
};

struct UnfoldJobResult {
  gen::UnfoldResult unfolded;
  size_t proved = 0;
  std::vector<std::string> unproved;  // "NAME: reason" of the forms the verifier did not prove
  std::string command, library;
};

// Throws OptionError for bad options, Error for bad terms or axioms, and Error naming the
// forms when one is not proved: a library of fused rules holds proven equalities only, and a
// form that is not one means a wrong axiom among those named.
UnfoldJobResult run_unfold_job(const UnfoldJobOptions& o, Reporter& rep);

}  // namespace graphsub::driver
