#include "rules/term.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

namespace graphsub::rules {

// Leaves (variables, integers, symbols) are immutable and few, so each thread hands out one
// shared node per distinct leaf: the generator holds millions of terms whose parameter and
// variable leaves would otherwise be a heap node each.
namespace {

TermPtr make_leaf(Term::Kind kind, std::string name, int64_t value) {
  auto t = std::make_shared<Term>();
  t->kind = kind;
  t->name = std::move(name);
  t->value = value;
  return t;
}

TermPtr interned(Term::Kind kind, std::string name, int64_t value) {
  struct Key {
    Term::Kind kind;
    std::string name;
    int64_t value;
    bool operator<(const Key& o) const {
      return std::tie(kind, name, value) < std::tie(o.kind, o.name, o.value);
    }
  };
  thread_local std::map<Key, TermPtr> cache;
  constexpr size_t kMaxCached = 4096;  // bounded: names from user files are not cached beyond
  Key key{kind, std::move(name), value};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  TermPtr t = make_leaf(kind, key.name, value);
  if (cache.size() < kMaxCached) cache.emplace(std::move(key), t);
  return t;
}

}  // namespace

TermPtr Term::var(std::string n) {
  return interned(Kind::Var, std::move(n), 0);
}

TermPtr Term::integer(int64_t v) {
  return interned(Kind::Int, std::string(), v);
}

TermPtr Term::symbol(std::string s) {
  return interned(Kind::Symbol, std::move(s), 0);
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
