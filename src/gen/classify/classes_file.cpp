#include "gen/classify/classes_file.h"

#include "gen/shard_files.h"
#include "rules/term.h"

namespace graphsub::gen {

namespace {

constexpr uint64_t kClassesMagic = 0x67737562636c7373ULL;  // "gsubclss"

// A term as it is, node by node (shape conditions are not rule terms the parser reads alone:
// their variables are declared by the rule around them).
void put_term(ByteWriter& w, const rules::TermPtr& t) {
  w.put<uint8_t>(static_cast<uint8_t>(t->kind));
  w.put_string(t->name);
  w.put(t->value);
  w.put<uint64_t>(t->args.size());
  for (const auto& a : t->args) put_term(w, a);
}

rules::TermPtr get_term(ByteReader& in, int depth = 0) {
  if (depth > 64) throw Error("classification shard: a term nested too deep (damaged file)");
  auto kind = static_cast<rules::Term::Kind>(in.get<uint8_t>());
  std::string name = in.get_string();
  int64_t value = in.get<int64_t>();
  uint64_t n = in.get<uint64_t>();
  std::vector<rules::TermPtr> args;
  for (uint64_t i = 0; i < n; ++i) args.push_back(get_term(in, depth + 1));
  switch (kind) {
    case rules::Term::Kind::Var:
      return rules::Term::var(std::move(name));
    case rules::Term::Kind::Int:
      return rules::Term::integer(value);
    case rules::Term::Kind::Symbol:
      return rules::Term::symbol(std::move(name));
    case rules::Term::Kind::App:
      return rules::Term::app(std::move(name), std::move(args));
  }
  throw Error("classification shard: a term of unknown kind (damaged file)");
}

}  // namespace

std::string classified_bytes(const Classified& c) {
  ByteWriter w;
  put_classified(w, c);
  return std::move(w.bytes());
}

void put_classified(ByteWriter& w, const Classified& c) {
  w.put(kClassesMagic);
  for (uint64_t v : {c.buckets, c.shared_graphs, c.pairs, c.passed, c.reduced, c.vanished,
                     c.parts_done, static_cast<uint64_t>(c.classes.size())})
    w.put(v);
  for (const auto& [key, acc] : c.classes) {
    w.put_string(key);
    w.put(acc.pairs);
    w.put(acc.reduced);
    w.put<uint64_t>(acc.shape_conds.size());
    for (const auto& t : acc.shape_conds) put_term(w, t);
  }
}

Classified classified_from_bytes(std::string_view bytes, const std::string& what,
                                 const std::function<bool(const std::string&)>& keep) {
  ByteReader in(bytes, what);
  if (in.get<uint64_t>() != kClassesMagic)
    throw Error(what + ": not a classification shard of this program");
  Classified c;
  for (uint64_t* v :
       {&c.buckets, &c.shared_graphs, &c.pairs, &c.passed, &c.reduced, &c.vanished, &c.parts_done})
    *v = in.get<uint64_t>();
  uint64_t n = in.get<uint64_t>();
  for (uint64_t i = 0; i < n; ++i) {
    std::string key = in.get_string();
    ClassAcc acc;
    acc.pairs = in.get<uint64_t>();
    acc.reduced = in.get<uint64_t>();
    uint64_t conds = in.get<uint64_t>();
    for (uint64_t k = 0; k < conds; ++k) acc.shape_conds.push_back(get_term(in));
    if (!keep || keep(key)) c.classes.emplace_hint(c.classes.end(), std::move(key), std::move(acc));
  }
  if (!in.done()) throw Error(what + ": damaged classification shard (bytes after the end)");
  return c;
}

}  // namespace graphsub::gen
