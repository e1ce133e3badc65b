#pragma once
// Parser of the rule language (grammar in docs/rules-language.md): domain and shape-space
// declarations, axioms and rules. Errors are graphsub::Error "file:line:column: what was
// expected".
#include <string>
#include <string_view>

#include "rules/rule.h"

namespace graphsub::rules {

// Parses a whole file. Domains come from the text itself and, when given, from `known` (a
// rules file uses the domains declared in specs/operators.axioms). Parameter values and
// variables are checked against the domains whenever domains are available.
RuleSet parse_rules(std::string_view text, const std::string& file, const RuleSet* known = nullptr);
// Reads and parses a file; throws Error naming the file when it cannot be read.
RuleSet load_rules(const std::string& path, const RuleSet* known = nullptr);

// Parses one term such as "(matmul none ?x (concat 1 ?y ?z))". Variables in parameter
// positions are parameter variables, the others tensor variables.
TermPtr parse_term(std::string_view text);
// Every tensor term of `text`, in order ("(relu ?a) ?b").
std::vector<TermPtr> parse_terms(std::string_view text);
// Every condition of `text` (the body of a (where ...), such as "(= (dim ?a 1) (dim ?b 0))")
// over the tensor variables `tensor_vars` (without '?').
std::vector<TermPtr> parse_conditions(std::string_view text,
                                      const std::vector<std::string>& tensor_vars);

}  // namespace graphsub::rules
