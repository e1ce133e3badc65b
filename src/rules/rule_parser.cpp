#include "rules/rule_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "rules/axiom_ops.h"
#include "rules/orientations.h"
#include "rules/sexpr.h"

namespace graphsub::rules {

const ParamDomain* RuleSet::domain(std::string_view name) const {
  for (auto& d : domains)
    if (d.name == name) return &d;
  return nullptr;
}

std::optional<ShapeSpace> ShapeSpace::fallback() const {
  if (fallback_ranks.empty()) return std::nullopt;
  ShapeSpace s = *this;
  s.ranks = fallback_ranks;
  // Scalars too: the factor of a scaled tensor (smul) is one.
  if (std::find(s.ranks.begin(), s.ranks.end(), 0) == s.ranks.end())
    s.ranks.insert(s.ranks.begin(), 0);
  s.fallback_ranks.clear();
  return s;
}

namespace {

bool parse_int(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  auto [p, ec] = std::from_chars(b, e, out);
  return ec == std::errc() && p == e;
}

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

std::string describe(const SExpr& e) {
  switch (e.kind) {
    case SExpr::Kind::Atom:
      return fmt::format("'{}'", e.text);
    case SExpr::Kind::String:
      return fmt::format("the string \"{}\"", e.text);
    case SExpr::Kind::List:
      return e.items.empty() ? "'()'"
                             : fmt::format("a list starting with {}", describe(e.items[0]));
  }
  return "?";
}

std::string op_signature(const AxiomOp& op) {
  std::string s = "(" + op.name;
  for (auto& p : *op.params) s += " " + p;
  for (size_t i = 0; i < op.num_tensors; ++i) s += fmt::format(" t{}", i + 1);
  return s + ")";
}

std::string all_op_names() {
  std::vector<std::string> names;
  for (auto& o : axiom_ops()) names.push_back(o.name);
  return fmt::format("{}", fmt::join(names, " "));
}

// Domains visible while parsing: those of `known` and those declared earlier in the file.
struct DomainTable {
  const RuleSet* known = nullptr;
  const RuleSet* local = nullptr;
  const ParamDomain* find(std::string_view name) const {
    if (local)
      if (auto* d = local->domain(name)) return d;
    if (known)
      if (auto* d = known->domain(name)) return d;
    return nullptr;
  }
  bool any() const {
    return (local && !local->domains.empty()) || (known && !known->domains.empty());
  }
};

// Parses the terms of one axiom or rule and types its variables.
class TermParser {
 public:
  explicit TermParser(const DomainTable* domains) : domains_(domains) {}

  struct VarInfo {
    bool tensor = false;
    std::string domain;  // parameter variables only
    SourceLocation loc;
    bool declared = false;
    bool used = false;
  };

  void declare_tensor(const SExpr& e) {
    std::string v = var_name(e, "a tensor variable such as ?x");
    if (vars_.count(v)) fail_at(e.loc, fmt::format("variable ?{} declared twice", v));
    vars_[v] = {true, "", e.loc, true, false};
    tensor_order_.push_back(v);
  }

  void declare_param(const SExpr& e) {
    if (!e.is_list() || e.items.size() != 2 || !e.items[1].is_atom())
      fail_at(e.loc,
              fmt::format("expected a parameter declaration (?v DOMAIN), got {}", describe(e)));
    std::string v = var_name(e.items[0], "a parameter variable such as ?s");
    const std::string& dom = e.items[1].text;
    if (!is_identifier(dom)) fail_at(e.items[1].loc, "expected a domain name");
    if (domains_->any() && !domains_->find(dom))
      fail_at(e.items[1].loc,
              fmt::format("domain '{}' is not declared (declare it with (domain {} values...))",
                          dom, dom));
    if (vars_.count(v)) fail_at(e.loc, fmt::format("variable ?{} declared twice", v));
    vars_[v] = {false, dom, e.loc, true, false};
    param_order_.push_back(v);
  }

  TermPtr tensor_term(const SExpr& e) {
    if (e.is_atom() && !e.text.empty() && e.text[0] == '?') {
      std::string v = var_name(e, "a tensor variable");
      use_var(v, e.loc, true, "");
      return Term::var(v);
    }
    if (!e.is_list())
      fail_at(e.loc,
              fmt::format(
                  "expected a tensor term (a ?variable or an (operator ...) application), got {}",
                  describe(e)));
    if (e.items.empty() || !e.items[0].is_atom())
      fail_at(e.loc, "expected an operator name after '('");
    const std::string& name = e.items[0].text;
    const AxiomOp* op = find_axiom_op(name);
    if (!op)
      fail_at(e.items[0].loc,
              fmt::format("unknown operator '{}' (expected one of: {})", name, all_op_names()));
    size_t np = op->num_params();
    size_t nargs = e.items.size() - 1;
    size_t nt = nargs >= np ? nargs - np : 0;
    if (nargs < np || nt != op->num_tensors)
      fail_at(
          e.loc,
          fmt::format(
              "{} expects {} parameter(s) then {} tensor argument(s), as in {}; got {} argument(s)",
              name, np, op->num_tensors, op_signature(*op), nargs));
    std::vector<TermPtr> args;
    for (size_t i = 0; i < np; ++i)
      args.push_back(param_arg(e.items[1 + i], (*op->params)[i], name));
    for (size_t i = np; i < nargs; ++i) args.push_back(tensor_term(e.items[1 + i]));
    return Term::app(name, std::move(args));
  }

  // A boolean constraint over parameters.
  TermPtr condition(const SExpr& e) {
    static const std::set<std::string, std::less<>> cmp{"=", "!=", "<", "<=", ">", ">="};
    if (!e.is_list() || e.items.empty() || !e.items[0].is_atom())
      fail_at(e.loc, fmt::format("expected a condition such as (!= ?a ?b), got {}", describe(e)));
    const std::string& h = e.items[0].text;
    std::vector<TermPtr> args;
    if (cmp.count(h)) {
      if (e.items.size() != 3) fail_at(e.loc, fmt::format("'{}' takes two arguments", h));
      for (size_t i = 1; i < 3; ++i) args.push_back(condition_atom(e.items[i]));
    } else if (h == "and" || h == "or") {
      for (size_t i = 1; i < e.items.size(); ++i) args.push_back(condition(e.items[i]));
    } else if (h == "not") {
      if (e.items.size() != 2) fail_at(e.loc, "'not' takes one condition");
      args.push_back(condition(e.items[1]));
    } else {
      fail_at(e.items[0].loc,
              fmt::format("expected one of = != < <= > >= and or not, got '{}'", h));
    }
    return Term::app(h, std::move(args));
  }

  // Declared variables that no term uses are errors; returns the variables in order.
  void finish(Rule& r) {
    for (auto& v : tensor_order_)
      if (!vars_[v].used)
        fail_at(vars_[v].loc, fmt::format("tensor variable ?{} is declared but not used", v));
    for (auto& v : param_order_)
      if (!vars_[v].used)
        fail_at(vars_[v].loc, fmt::format("parameter variable ?{} is declared but not used", v));
    r.tensor_vars = tensor_order_;
    for (auto& v : param_order_) r.param_vars.push_back({v, vars_[v].domain});
  }

  const std::map<std::string, VarInfo>& vars() const { return vars_; }
  // A tensor variable the terms parsed elsewhere use (conditions may name it).
  void know_tensor_var(const std::string& v) { use_var(v, {}, true, ""); }

 private:
  static std::string var_name(const SExpr& e, const char* what) {
    if (!e.is_atom() || e.text.size() < 2 || e.text[0] != '?' || !is_identifier(e.text.substr(1)))
      fail_at(e.loc, fmt::format("expected {}, got {}", what, describe(e)));
    return e.text.substr(1);
  }

  void use_var(const std::string& v, const SourceLocation& loc, bool tensor,
               const std::string& domain) {
    auto it = vars_.find(v);
    if (it == vars_.end()) {
      vars_[v] = {tensor, domain, loc, false, true};
      (tensor ? tensor_order_ : param_order_).push_back(v);
      return;
    }
    VarInfo& info = it->second;
    info.used = true;
    if (info.tensor != tensor)
      fail_at(loc, fmt::format("?{} is used as a {} here but as a {} at {}", v,
                               tensor ? "tensor" : "parameter",
                               info.tensor ? "tensor" : "parameter", location_str(info.loc)));
    if (!tensor && !domain.empty() && info.domain != domain)
      fail_at(loc, fmt::format("?{} is used as a {} here but is a {} (from {})", v, domain,
                               info.domain, location_str(info.loc)));
  }

  TermPtr value_atom(const SExpr& e) {
    int64_t v = 0;
    if (parse_int(e.text, v)) return Term::integer(v);
    if (!is_identifier(e.text))
      fail_at(e.loc, fmt::format("expected an integer or a symbol, got '{}'", e.text));
    return Term::symbol(e.text);
  }

  TermPtr param_arg(const SExpr& e, const std::string& domain, const std::string& op) {
    if (!e.is_atom())
      fail_at(e.loc, fmt::format("expected the {} parameter of {} (a value or a ?variable), got {}",
                                 domain, op, describe(e)));
    if (e.text[0] == '?') {
      std::string v = var_name(e, "a parameter variable");
      use_var(v, e.loc, false, domain);
      return Term::var(v);
    }
    TermPtr t = value_atom(e);
    if (const ParamDomain* d = domains_->find(domain)) {
      bool ok = std::any_of(d->values.begin(), d->values.end(),
                            [&](const TermPtr& x) { return term_equal(x, t); });
      if (!ok) {
        std::vector<std::string> vs;
        for (auto& x : d->values) vs.push_back(term_str(x));
        fail_at(e.loc, fmt::format("{} is not in domain {} (expected one of: {})", term_str(t),
                                   domain, fmt::join(vs, " ")));
      }
    } else if (domains_->any()) {
      fail_at(e.loc, fmt::format("domain '{}' of the {} parameter of {} is not declared", domain,
                                 domain, op));
    }
    return t;
  }

  TermPtr condition_atom(const SExpr& e) {
    if (e.head() == "dim") {
      // (dim ?t AXIS): the size of an axis of a tensor variable.
      int64_t axis = 0;
      if (e.items.size() != 3 || !e.items[2].is_atom() || !parse_int(e.items[2].text, axis) ||
          axis < 0)
        fail_at(e.loc, "expected (dim ?tensor AXIS) with a non-negative integer axis");
      std::string v = var_name(e.items[1], "a tensor variable");
      auto it = vars_.find(v);
      if (it == vars_.end() || !it->second.tensor)
        fail_at(e.items[1].loc, fmt::format("?{} must be a tensor variable of the rule", v));
      it->second.used = true;
      return Term::app("dim", {Term::var(v), Term::integer(axis)});
    }
    if (!e.is_atom())
      fail_at(e.loc, fmt::format("expected a parameter value, a ?variable or (dim ?t AXIS), got {}",
                                 describe(e)));
    if (e.text[0] == '?') {
      std::string v = var_name(e, "a parameter variable");
      auto it = vars_.find(v);
      if (it == vars_.end())
        fail_at(e.loc, fmt::format("?{} must be declared in (params ...) or used as a parameter "
                                   "before a condition can use it",
                                   v));
      if (it->second.tensor)
        fail_at(e.loc, fmt::format("?{} is a tensor variable; conditions are over parameters", v));
      return Term::var(v);
    }
    return value_atom(e);
  }

  const DomainTable* domains_;
  std::map<std::string, VarInfo> vars_;
  std::vector<std::string> tensor_order_, param_order_;
};

std::vector<TermPtr> nonempty_terms(TermParser& tp, const SExpr& e, const char* what) {
  if (e.items.size() < 2)
    fail_at(e.loc, fmt::format("expected at least one term in ({} ...)", what));
  std::vector<TermPtr> out;
  for (size_t i = 1; i < e.items.size(); ++i) out.push_back(tp.tensor_term(e.items[i]));
  return out;
}

// A rewrite replaces a match of the source: everything the target needs must be bound.
void check_rewrite(const Rule& r, const SExpr& e) {
  std::set<std::string> bound;
  std::vector<const Term*> stack;
  for (auto& t : r.source) stack.push_back(t.get());
  while (!stack.empty()) {
    const Term* t = stack.back();
    stack.pop_back();
    if (t->kind == Term::Kind::Var) bound.insert(t->name);
    for (auto& a : t->args) stack.push_back(a.get());
  }
  for (auto& t : r.target) stack.push_back(t.get());
  for (auto& c : r.constraints) stack.push_back(c.get());
  while (!stack.empty()) {
    const Term* t = stack.back();
    stack.pop_back();
    if (t->kind == Term::Kind::Var && !bound.count(t->name))
      fail_at(e.loc, fmt::format(
                         "rule '{}': ?{} appears in the target or conditions but not in the source",
                         r.name, t->name));
    for (auto& a : t->args) stack.push_back(a.get());
  }
  for (auto& s : r.source)
    if (s->kind == Term::Kind::Var)
      fail_at(
          e.loc,
          fmt::format("rule '{}': a source output must apply an operator, not be the variable ?{}",
                      r.name, s->name));
}

// An equality must drive a rewrite in at least one direction, and a name of the content form
// must be its own: a hand edit of a generated equality that kept the name is an error.
void check_equality(const Rule& r, const SExpr& e) {
  if (orientations(r).empty())
    fail_at(e.loc, fmt::format("equality '{}' can drive a rewrite in neither direction (a side "
                               "is a bare variable or uses a variable the other does not bind)",
                               r.name));
  if (is_content_name(r.name) && content_name(r) != r.name)
    fail_at(e.loc, fmt::format("equality '{}' states an equality whose content name is {}: a name "
                               "of the form r-XXXXXXXX must be its content's (regenerate the "
                               "library, or give an edited equality another name)",
                               r.name, content_name(r)));
}

enum class ItemKind { Axiom, Rule, Equality };

// Shared by axioms, rules and equalities: name, optional doc string, then clauses.
Rule parse_rule_like(const SExpr& e, ItemKind kind, const DomainTable& domains) {
  const bool axiom = kind == ItemKind::Axiom, equality = kind == ItemKind::Equality;
  const char* kw = axiom ? "axiom" : equality ? "equality" : "rule";
  const char* article = kind == ItemKind::Rule ? "a" : "an";
  // The clauses of the two sides: (source ...) (target ...) in a rule, (lhs ...) (rhs ...) in
  // an equality (which rewrites both ways), (= lhs rhs) in an axiom.
  const char* first = equality ? "lhs" : "source";
  const char* second = equality ? "rhs" : "target";
  Rule r;
  r.loc = e.loc;
  r.both_ways = equality;
  if (e.items.size() < 2 || !e.items[1].is_atom() || !is_identifier(e.items[1].text))
    fail_at(e.items.size() < 2 ? e.loc : e.items[1].loc,
            fmt::format("expected a name after '{}'", kw));
  r.name = e.items[1].text;
  size_t i = 2;
  if (i < e.items.size() && e.items[i].is_string()) r.doc = e.items[i++].text;

  // Declarations first so that later clauses can refer to them.
  TermParser tp(&domains);
  std::vector<const SExpr*> bodies;
  for (; i < e.items.size(); ++i) {
    const SExpr& c = e.items[i];
    std::string_view h = c.head();
    if (h == "tensors") {
      for (size_t k = 1; k < c.items.size(); ++k) tp.declare_tensor(c.items[k]);
    } else if (h == "params") {
      for (size_t k = 1; k < c.items.size(); ++k) tp.declare_param(c.items[k]);
    } else if (h == "where" || h == "source" || h == "target" || h == "lhs" || h == "rhs" ||
               h == "=") {
      bodies.push_back(&c);
    } else {
      fail_at(c.loc, fmt::format("expected (tensors ...), (params ...), (where ...), {} in {} "
                                 "'{}', got {}",
                                 axiom ? "or (= lhs rhs)"
                                       : fmt::format("({} ...) or ({} ...)", first, second),
                                 kw, r.name, describe(c)));
    }
  }
  // Terms before conditions so that conditions may use parameters the terms introduce.
  bool have_source = false, have_target = false;
  for (const SExpr* c : bodies) {
    std::string_view h = c->head();
    if (h == "=" && axiom) {
      if (have_source) fail_at(c->loc, "an axiom has one (= lhs rhs)");
      if (c->items.size() != 3) fail_at(c->loc, "expected (= lhs rhs) with exactly two terms");
      r.source.push_back(tp.tensor_term(c->items[1]));
      r.target.push_back(tp.tensor_term(c->items[2]));
      have_source = have_target = true;
    } else if (h == first && !axiom) {
      if (have_source) fail_at(c->loc, fmt::format("{} {} has one ({} ...)", article, kw, first));
      r.source = nonempty_terms(tp, *c, first);
      have_source = true;
    } else if (h == second && !axiom) {
      if (have_target) fail_at(c->loc, fmt::format("{} {} has one ({} ...)", article, kw, second));
      r.target = nonempty_terms(tp, *c, second);
      have_target = true;
    } else if (h != "where") {
      fail_at(c->loc, fmt::format("({} ...) is not allowed in {} {}", h, article, kw));
    }
  }
  for (const SExpr* c : bodies)
    if (c->head() == "where")
      for (size_t k = 1; k < c->items.size(); ++k)
        r.constraints.push_back(tp.condition(c->items[k]));
  if (!have_source)
    fail_at(e.loc, fmt::format("{} '{}' has no {}", kw, r.name,
                               axiom ? "(= lhs rhs)" : fmt::format("({} ...)", first)));
  if (!have_target) fail_at(e.loc, fmt::format("{} '{}' has no ({} ...)", kw, r.name, second));
  if (r.source.size() != r.target.size())
    fail_at(e.loc, fmt::format("{} '{}' has {} {} output(s) but {} {} output(s)", kw, r.name,
                               r.source.size(), first, r.target.size(), second));
  tp.finish(r);
  for (auto& pv : r.param_vars)
    if (domains.any() && !domains.find(pv.domain))
      fail_at(e.loc, fmt::format("parameter ?{} has undeclared domain '{}'", pv.name, pv.domain));
  if (kind == ItemKind::Rule) check_rewrite(r, e);
  if (equality) check_equality(r, e);
  return r;
}

ParamDomain parse_domain(const SExpr& e) {
  ParamDomain d;
  d.loc = e.loc;
  if (e.items.size() < 3 || !e.items[1].is_atom() || !is_identifier(e.items[1].text))
    fail_at(e.loc, "expected (domain NAME value...) with at least one value");
  d.name = e.items[1].text;
  for (size_t i = 2; i < e.items.size(); ++i) {
    const SExpr& v = e.items[i];
    int64_t x = 0;
    if (v.is_atom() && parse_int(v.text, x))
      d.values.push_back(Term::integer(x));
    else if (v.is_atom() && is_identifier(v.text) && v.text[0] != '?')
      d.values.push_back(Term::symbol(v.text));
    else
      fail_at(v.loc, fmt::format("expected an integer or a symbol in domain {}, got {}", d.name,
                                 describe(v)));
    for (size_t k = 0; k + 1 < d.values.size(); ++k)
      if (term_equal(d.values[k], d.values.back()))
        fail_at(v.loc, fmt::format("value {} listed twice in domain {}", v.text, d.name));
  }
  return d;
}

ShapeSpace parse_shapes(const SExpr& e) {
  ShapeSpace s;
  for (size_t i = 1; i < e.items.size(); ++i) {
    const SExpr& c = e.items[i];
    std::string_view h = c.head();
    std::vector<int64_t>* dst = h == "ranks"            ? &s.ranks
                                : h == "dims"           ? &s.dims
                                : h == "kernel-dims"    ? &s.kernel_dims
                                : h == "split-dims"     ? &s.split_dims
                                : h == "fallback-ranks" ? &s.fallback_ranks
                                                        : nullptr;
    if (!dst)
      fail_at(c.loc, fmt::format("expected (ranks ...), (dims ...), (kernel-dims ...), "
                                 "(split-dims ...) or (fallback-ranks ...), got {}",
                                 describe(c)));
    const bool a_rank = h == "ranks" || h == "fallback-ranks";
    dst->clear();
    for (size_t k = 1; k < c.items.size(); ++k) {
      int64_t x = 0;
      if (!c.items[k].is_atom() || !parse_int(c.items[k].text, x) || x < 0 || (!a_rank && x < 1) ||
          x > 64)
        fail_at(c.items[k].loc,
                fmt::format("expected a small {} integer, got {}",
                            a_rank ? "non-negative" : "positive", describe(c.items[k])));
      dst->push_back(x);
    }
    if (dst->empty() && h != "split-dims" && h != "fallback-ranks")
      fail_at(c.loc, fmt::format("({} ...) needs at least one value", h));
  }
  return s;
}

}  // namespace

RuleSet parse_rules(std::string_view text, const std::string& file, const RuleSet* known) {
  RuleSet out;
  DomainTable domains{known, &out};
  std::set<std::string> names;
  for (const SExpr& e : read_sexprs(text, file)) {
    std::string_view h = e.head();
    if (h == "domain") {
      ParamDomain d = parse_domain(e);
      if (domains.find(d.name)) fail_at(e.loc, fmt::format("domain {} declared twice", d.name));
      out.domains.push_back(std::move(d));
    } else if (h == "shapes") {
      if (out.shapes) fail_at(e.loc, "(shapes ...) declared twice");
      out.shapes = parse_shapes(e);
    } else if (h == "axiom" || h == "rule" || h == "equality") {
      Rule r = parse_rule_like(e,
                               h == "axiom"  ? ItemKind::Axiom
                               : h == "rule" ? ItemKind::Rule
                                             : ItemKind::Equality,
                               domains);
      if (!names.insert(r.name).second) fail_at(e.loc, fmt::format("name '{}' used twice", r.name));
      (h == "axiom" ? out.axioms : out.rules).push_back(std::move(r));
    } else {
      fail_at(e.loc, fmt::format("expected (domain ...), (shapes ...), (axiom ...), (rule ...) or "
                                 "(equality ...), got {}",
                                 describe(e)));
    }
  }
  return out;
}

RuleSet load_rules(const std::string& path, const RuleSet* known) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read rule file '{}': {}", path, std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_rules(ss.str(), path, known);
}

TermPtr parse_term(std::string_view text) {
  auto es = read_sexprs(text, "<term>");
  if (es.size() != 1) throw Error(fmt::format("expected exactly one term in '{}'", text));
  DomainTable none;
  TermParser tp(&none);
  return tp.tensor_term(es[0]);
}

std::vector<TermPtr> parse_terms(std::string_view text) {
  DomainTable none;
  TermParser tp(&none);
  std::vector<TermPtr> out;
  for (const SExpr& e : read_sexprs(text, "<terms>")) out.push_back(tp.tensor_term(e));
  return out;
}

std::vector<TermPtr> parse_conditions(std::string_view text,
                                      const std::vector<std::string>& tensor_vars) {
  DomainTable none;
  TermParser tp(&none);
  for (const std::string& v : tensor_vars) tp.know_tensor_var(v);
  std::vector<TermPtr> out;
  for (const SExpr& e : read_sexprs(text, "<conditions>")) out.push_back(tp.condition(e));
  return out;
}

}  // namespace graphsub::rules
