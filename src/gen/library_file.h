#pragma once
// The text of a generated rule library and of its report of unproved candidates.
//
// Each proven equality becomes up to two rules, one per direction: `gen-0042` (left to right)
// and `gen-0042-rev` (another prefix with LibraryInfo::name_prefix). A direction is left out when
// its source would be a bare variable or its target would use a variable its source does not bind
// (split0(concat(x, y)) = x has no reverse). The header names the exact command, the pool, and the
// count after each stage; nothing in the file depends on time or threads, so the same flags give
// the same bytes.
#include <string>
#include <vector>

#include "gen/generator.h"

namespace graphsub::gen {

struct LibraryInfo {
  std::string command;  // as typed, normalised (flags in a fixed order)
  std::string pool;     // pool_str()
  std::string axioms;   // the axioms file the domains and proofs came from
  // Rules are named PREFIX-0042 (and PREFIX-0042-rev): libraries loaded together need
  // different prefixes, or one rule name would stand for two rules.
  std::string name_prefix = "gen";
};

// The rules of one equality (one or two directions).
std::vector<rules::Rule> rules_of(const Equality& e, const std::string& name);

std::string library_text(const GeneratorResult& r, const LibraryInfo& info);
std::string unproved_text(const GeneratorResult& r, const LibraryInfo& info);

}  // namespace graphsub::gen
