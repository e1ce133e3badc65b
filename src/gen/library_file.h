#pragma once
// The text of a generated rule library and of its report of unproved candidates.
//
// Each proven equality is written once, as `(equality r-3fa9c2d1 ...)` named by a hash of its
// content (rules/orientations.h: the same name in every regeneration, wherever it lands in the
// file); the loader uses it in each direction that can drive a rewrite (split0(concat(x, y)) = x
// only left to right). The header names the exact command, the pool, and the count after each
// stage; nothing in the file depends on time or threads, so the same flags give the same bytes.
#include <string>
#include <vector>

#include "gen/generator.h"

namespace graphsub::gen {

struct LibraryInfo {
  std::string command;  // as typed, normalised (flags in a fixed order)
  std::string pool;     // pool_str() ("": none, a library of `graphsub unfold`)
  std::string axioms;   // the axioms file the domains and proofs came from
};

// The equality as the library states it (Rule::both_ways, named by its content).
rules::Rule library_rule(const Equality& e);

std::string library_text(const GeneratorResult& r, const LibraryInfo& info);
std::string unproved_text(const GeneratorResult& r, const LibraryInfo& info);

}  // namespace graphsub::gen
