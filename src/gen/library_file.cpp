#include "gen/library_file.h"

#include <fmt/format.h>

#include "rules/orientations.h"
#include "rules/rule_printer.h"

namespace graphsub::gen {

namespace {

std::string header(const GeneratorResult& r, const LibraryInfo& info, const char* what) {
  std::string h = fmt::format("; {}, produced by:\n;   {}\n", what, info.command);
  h += fmt::format("; axioms: {}\n", info.axioms);
  // A library unfolded from fused operators' definitions (`graphsub unfold`) has neither.
  if (!info.pool.empty()) h += fmt::format("; pool: {}\n", info.pool);
  if (!r.variants.empty()) h += fmt::format("; {} operator variants searched\n", r.variants.size());
  h += "; stage counts:\n";
  for (auto& s : r.stages) h += fmt::format(";   {:<32} {:>12}\n", s.stage, s.count);
  if (r.minimal_reads)
    h += fmt::format(
        "; the largest graphs read only representative values ({} values left unread) and\n"
        "; have no partial output that is not one ({} graphs left out): a rule that needs one\n"
        "; follows from a smaller rule and one kept here\n",
        r.redundant_values, r.unrepresentative_graphs);
  return h;
}

}  // namespace

rules::Rule library_rule(const Equality& e) {
  rules::Rule r = to_rule(e, "", false);
  r.both_ways = true;
  r.name = rules::content_name(r);
  return r;
}

std::string library_text(const GeneratorResult& r, const LibraryInfo& info) {
  std::string text = header(r, info, "graphsub rule library");
  size_t directed = 0;
  std::string body;
  for (const Equality& e : r.rules) {
    rules::Rule rule = library_rule(e);
    directed += rules::orientations(rule).size();
    body += "\n" + rules::rule_str(rule) + "\n";
  }
  text += fmt::format(
      ";\n; {} proven equalities, used as {} rules (each direction that can drive a rewrite: the\n"
      "; equality NAME left to right, NAME~rev right to left). Every one was proved by the "
      "verifier\n"
      "; from the axioms, or follows from a proved rule by renaming or substitution.\n",
      r.rules.size(), directed);
  if (r.conditional > 0)
    text += fmt::format(
        "; {} candidate classes were not proved as stated but were proved under (where ...)\n"
        "; shape conditions that held in every enumerated instance: convs are dense (kernel\n"
        "; dimension 1 = input dimension 1), matmuls' inner sizes agree; their rules carry them.\n",
        r.conditional);
  return text + body;
}

std::string unproved_text(const GeneratorResult& r, const LibraryInfo& info) {
  std::string text = header(r, info, "graphsub generator: candidates the verifier did not prove");
  text += fmt::format(
      ";\n; {} candidate rules (classes up to renaming) passed the numerical re-test but\n"
      "; were not proved; none of them is in the library.\n",
      r.unproved.size());
  if (r.not_tried > 0)
    text += fmt::format(
        "; {} of them were not sent to the prover: a more general form of theirs (a class\n"
        "; that passed the re-test too) was not proved, and each names it.\n",
        r.not_tried);
  if (r.reduced_pairs > 0)
    text += fmt::format(
        "; {} candidate pairs with a side of {} or more operators were classified in their\n"
        "; reduced form (common subgraphs taken out) and not tried as they were; a class\n"
        "; says how many of its candidate pairs were such reduced ones.\n",
        r.reduced_pairs, r.reduce_from_ops);
  // Hundreds of thousands of entries at N = 4: room for them at once (a string grown by
  // doubling would hold two copies on the way).
  size_t room = text.size();
  for (const UnprovedRule& u : r.unproved) room += 2 * u.key.size() + u.reason.size() + 160;
  text.reserve(room);
  for (size_t i = 0; i < r.unproved.size(); ++i) {
    const UnprovedRule& u = r.unproved[i];
    rules::Rule rule =
        to_rule(equality_from_key(u.key, false), fmt::format("unproved-{:04}", i + 1), false);
    rule.doc = u.reason;
    if (u.reduced > 0)
      rule.doc += fmt::format("; stands for {} candidate pairs, {} of them reduced into it",
                              u.pairs, u.reduced);
    text += "\n" + rules::rule_str(rule) + "\n";
  }
  return text;
}

}  // namespace graphsub::gen
