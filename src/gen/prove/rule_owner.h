#pragma once
// Which rank holds a class while proving. Classes that the proving passes compare with one
// another must lie on one rank: the renaming forms of a skeleton (link_most_general_forms) and
// the members of a lifted rule (classes that differ in the values of a parameter, whose
// canonical orientation may differ). So the owner is a hash of what they share: the outputs of
// both sides with variables and parameter values erased, as a sorted list (the orientation and
// the order of the outputs do not count).
#include <string>
#include <string_view>

namespace graphsub::gen {

// The erased form: "(conv _ _ _ _ (enlarge _ _))|(conv _ _ _ _ _)", outputs sorted.
std::string owner_form(std::string_view key);

// The rank of `ranks` that proves the class with this canonical key (0 for one rank).
int rule_owner(std::string_view key, int ranks);

}  // namespace graphsub::gen
