#pragma once
// Terms of the axiom and rule language: S-expressions over the operators' axiom names.
//   (matmul none ?x (concat 1 ?y ?z))
// An application lists the operator's parameter arguments first (integers, symbols or
// parameter variables), then its tensor arguments. Identical subterms denote the same value,
// so a term is a DAG in effect: instantiating it shares equal subterms.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace graphsub::rules {

struct Term;
using TermPtr = std::shared_ptr<const Term>;

struct Term {
  enum class Kind : uint8_t {
    Var,     // ?x: a tensor variable or a parameter variable (the rule's declarations say which)
    Int,     // 1
    Symbol,  // same, relu
    App,     // (op args...)
  };
  Kind kind = Kind::App;
  std::string name;   // variable name without '?', symbol, or operator axiom name
  int64_t value = 0;  // Int only
  std::vector<TermPtr> args;

  static TermPtr var(std::string n);
  static TermPtr integer(int64_t v);
  static TermPtr symbol(std::string s);
  static TermPtr app(std::string op, std::vector<TermPtr> args);
};

bool term_equal(const TermPtr& a, const TermPtr& b);
std::string term_str(const TermPtr& t);  // canonical one-line S-expression

}  // namespace graphsub::rules
