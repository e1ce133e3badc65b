#pragma once
// An equality of a rule file, `(equality NAME ...)`, is stored once and used in each direction
// that can drive a rewrite; its name is derived from its content, so that it names the same
// equality in every regeneration of a library, wherever the equality lands in the file.
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.h"

namespace graphsub::rules {

// The name of an equality's right-to-left direction is NAME + this suffix (a character the
// language does not allow in names, so no written name can take it).
inline constexpr std::string_view kReverseSuffix = "~rev";

// True when source -> target can drive a rewrite: every source output applies an operator, and
// the target and the conditions use only variables the source binds.
bool usable_direction(const std::vector<TermPtr>& source, const std::vector<TermPtr>& target,
                      const std::vector<TermPtr>& conditions);

// The directed rules of `r`: a plain rule is itself; an equality gives its left-to-right
// direction (named r.name) and its right-to-left one (r.name + kReverseSuffix, its tensor
// variables declared in order of first occurrence), each where usable_direction holds.
std::vector<Rule> orientations(const Rule& r);

// What proving `r` means: `r` itself, or for an equality its first usable direction (the same
// statement, in the form a rewrite rule has) under the equality's name.
Rule statement(const Rule& r);

// The equality's text with its variables renamed in order of first occurrence, in the
// orientation and output order whose text is smallest; the conditions, renamed alike and
// sorted, and the parameter domains are part of it. The same for every statement of one
// equality up to renaming, orientation and output order.
std::string content_key(const Rule& r);

// "r-" and 8 hexadecimal digits of a hash of content_key(r).
std::string content_name(const Rule& r);
// True for a name of that form (whose equality must then hash to it).
bool is_content_name(std::string_view name);

}  // namespace graphsub::rules
