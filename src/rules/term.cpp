#include "rules/term.h"

#include <fmt/format.h>

namespace graphsub::rules {

TermPtr Term::var(std::string n) {
  auto t = std::make_shared<Term>();
  t->kind = Kind::Var;
  t->name = std::move(n);
  return t;
}

TermPtr Term::integer(int64_t v) {
  auto t = std::make_shared<Term>();
  t->kind = Kind::Int;
  t->value = v;
  return t;
}

TermPtr Term::symbol(std::string s) {
  auto t = std::make_shared<Term>();
  t->kind = Kind::Symbol;
  t->name = std::move(s);
  return t;
}

TermPtr Term::app(std::string op, std::vector<TermPtr> args) {
  auto t = std::make_shared<Term>();
  t->kind = Kind::App;
  t->name = std::move(op);
  t->args = std::move(args);
  return t;
}

bool term_equal(const TermPtr& a, const TermPtr& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  if (a->kind != b->kind || a->name != b->name || a->value != b->value ||
      a->args.size() != b->args.size())
    return false;
  for (size_t i = 0; i < a->args.size(); ++i)
    if (!term_equal(a->args[i], b->args[i])) return false;
  return true;
}

static void append_term(std::string& out, const Term& t) {
  switch (t.kind) {
    case Term::Kind::Var:
      out += '?';
      out += t.name;
      return;
    case Term::Kind::Int:
      out += fmt::format("{}", t.value);
      return;
    case Term::Kind::Symbol:
      out += t.name;
      return;
    case Term::Kind::App:
      out += '(';
      out += t.name;
      for (auto& a : t.args) {
        out += ' ';
        append_term(out, *a);
      }
      out += ')';
      return;
  }
}

std::string term_str(const TermPtr& t) {
  std::string s;
  if (t) append_term(s, *t);
  return s;
}

}  // namespace graphsub::rules
