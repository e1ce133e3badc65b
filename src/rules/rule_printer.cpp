#include "rules/rule_printer.h"

#include <fmt/format.h>

namespace graphsub::rules {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string terms(const std::vector<TermPtr>& ts) {
  std::string s;
  for (auto& t : ts) s += " " + term_str(t);
  return s;
}

}  // namespace

std::string rule_str(const Rule& r, bool as_axiom) {
  const char* kw = as_axiom ? "axiom" : r.both_ways ? "equality" : "rule";
  std::string s = fmt::format("({} {}", kw, r.name);
  if (!r.doc.empty()) s += " " + quoted(r.doc);
  if (!r.tensor_vars.empty()) {
    s += "\n  (tensors";
    for (auto& v : r.tensor_vars) s += " ?" + v;
    s += ")";
  }
  if (!r.param_vars.empty()) {
    s += "\n  (params";
    for (auto& p : r.param_vars) s += fmt::format(" (?{} {})", p.name, p.domain);
    s += ")";
  }
  if (!r.constraints.empty()) s += "\n  (where" + terms(r.constraints) + ")";
  if (as_axiom && r.source.size() == 1 && r.target.size() == 1) {
    s += fmt::format("\n  (= {}\n     {})", term_str(r.source[0]), term_str(r.target[0]));
  } else {
    s += fmt::format("\n  ({}{})", r.both_ways ? "lhs" : "source", terms(r.source));
    s += fmt::format("\n  ({}{})", r.both_ways ? "rhs" : "target", terms(r.target));
  }
  return s + ")";
}

std::string domain_str(const ParamDomain& d) {
  return fmt::format("(domain {}{})", d.name, terms(d.values));
}

std::string shapes_str(const ShapeSpace& s) {
  std::string fallback = s.fallback_ranks.empty() ? ""
                                                  : fmt::format(" (fallback-ranks {})",
                                                                fmt::join(s.fallback_ranks, " "));
  return fmt::format("(shapes (ranks {}) (dims {}) (kernel-dims {}) (split-dims {}){})",
                     fmt::join(s.ranks, " "), fmt::join(s.dims, " "), fmt::join(s.kernel_dims, " "),
                     fmt::join(s.split_dims, " "), fallback);
}

std::string ruleset_str(const RuleSet& s) {
  std::string out;
  for (auto& d : s.domains) out += domain_str(d) + "\n";
  if (s.shapes) out += shapes_str(*s.shapes) + "\n";
  for (auto& a : s.axioms) out += "\n" + rule_str(a, true) + "\n";
  for (auto& r : s.rules) out += "\n" + rule_str(r) + "\n";
  return out;
}

}  // namespace graphsub::rules
