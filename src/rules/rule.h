#pragma once
// A rewrite rule: source and target terms over shared variables, possibly with several
// outputs (source output i is replaced by target output i).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/term.h"

namespace graphsub::rules {

struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

struct ParamVar {
  std::string name;    // without '?'
  std::string domain;  // a domain declared in specs/operators.axioms (stride, padding, act, ...)
};

struct Rule {
  std::string name;
  std::string doc;                       // optional one-line description ("" when absent)
  std::vector<std::string> tensor_vars;  // the rule's tensor inputs, in order
  std::vector<ParamVar> param_vars;
  std::vector<TermPtr> constraints;  // boolean terms over parameter variables, e.g. (!= ?a ?b)
  std::vector<TermPtr> source;       // one term per output
  std::vector<TermPtr> target;       // same length as source
  // An equality (`(equality ...)`, stored once): rewrites in each usable direction,
  // source = lhs and target = rhs here (rules/orientations.h).
  bool both_ways = false;
  SourceLocation loc;
};

// A declared parameter domain: the values a parameter variable of that domain ranges over,
// e.g. (domain stride 1 2) or (domain padding same valid).
struct ParamDomain {
  std::string name;
  std::vector<TermPtr> values;  // Int or Symbol terms
  SourceLocation loc;
};

// The shapes bounded testing enumerates: every tensor variable takes every shape of one of the
// ranks with every dimension in `dims`, except the two spatial dimensions of convolution
// kernels, which take `kernel_dims`. A second pass gives the variables split points, as if
// they came from a concat: every shape with dimensions in `split_dims` (kernels: kernel_dims),
// without a split point or with one cut at 1 on any one axis (empty: no second pass). An axiom
// or rule none of whose instances type-checks at `ranks` is tested at `fallback_ranks` (and
// rank 0, for scalar factors) instead: rank 3, a batch of sequences with heads packed in its hidden
// axis, only where nothing else types (with every rank at once, three-tensor axioms over
// broadcasting operators pass the instance search's bound, and axioms about matrices meet 3-d
// products).
struct ShapeSpace {
  std::vector<int64_t> ranks{0, 2, 4};
  std::vector<int64_t> dims{1, 2, 3, 4};
  std::vector<int64_t> kernel_dims{1, 3};
  std::vector<int64_t> split_dims{2};
  std::vector<int64_t> fallback_ranks;

  // The same space at the fallback ranks (nullopt when there are none).
  std::optional<ShapeSpace> fallback() const;
};

// The contents of one file of the language: specs/operators.axioms or a rules/*.rules file.
struct RuleSet {
  std::vector<ParamDomain> domains;
  std::optional<ShapeSpace> shapes;  // (shapes ...) when the file declares it
  std::vector<Rule> axioms;
  std::vector<Rule> rules;

  const ParamDomain* domain(std::string_view name) const;
};

}  // namespace graphsub::rules
