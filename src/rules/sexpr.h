#pragma once
// A small S-expression reader for the rule language: lists, atoms and "strings", with ';'
// comments to the end of the line. Every node remembers where it starts (line and column), so
// that later stages can report errors as file:line:column.
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.h"

namespace graphsub::rules {

struct SExpr {
  enum class Kind { Atom, String, List };
  Kind kind = Kind::Atom;
  std::string text;  // atom or string contents (unescaped)
  std::vector<SExpr> items;
  SourceLocation loc;

  bool is_atom() const { return kind == Kind::Atom; }
  bool is_list() const { return kind == Kind::List; }
  bool is_string() const { return kind == Kind::String; }
  // The head atom of a list, or "" when it is not a list starting with an atom.
  std::string_view head() const;
};

// The deepest nesting of lists read_sexprs accepts. Every later stage (terms, conditions,
// instantiation, printing, the Z3 encoding, matching) recurses over the nesting, so a bound
// here keeps a hostile file from overflowing any of their stacks. The deepest rule of the
// shipped files nests 7 lists (a term of 5 operators inside (rule (source ...))); hand-written
// rules get room to spare.
inline constexpr int kMaxNesting = 256;

// Reads every top-level expression of `text`. Throws graphsub::Error "file:line:col: ..." on an
// unbalanced parenthesis, an unterminated string, a stray ')' or lists nested deeper than
// kMaxNesting.
std::vector<SExpr> read_sexprs(std::string_view text, const std::string& file);

// "file:line:col" of a location, for messages.
std::string location_str(const SourceLocation& loc);

// Throws graphsub::Error("file:line:col: message").
[[noreturn]] void fail_at(const SourceLocation& loc, const std::string& message);

}  // namespace graphsub::rules
