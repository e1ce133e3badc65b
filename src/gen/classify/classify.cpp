#include "gen/classify/classify.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <utility>

#include "gen/classify/common_subgraph.h"
#include "ir/parallel.h"

namespace graphsub::gen {

namespace {

struct Local {
  std::unique_ptr<GraphEvaluator> ev, alt;
  Classified c;           // this thread's classes and counts
  size_t last_count = 0;  // c.classes.size() when last reported
};

void add_candidate(const Space& s, Local& l, Candidate& c, const EvaluatedGraph& ea,
                   const EvaluatedGraph& eb, const EvaluatedGraph& fa, const EvaluatedGraph& fb,
                   const ClassifyOptions& opts) {
  ++l.c.pairs;
  if (!float_retest(ea, eb, fa, fb, c, opts.tolerance)) return;
  ++l.c.passed;
  Equality e = equality_of(s, c);
  std::vector<rules::TermPtr> shape_conds = shape_conditions(s, c);
  bool reduced = false;
  if (std::max(c.a.g.num_ops, c.b.g.num_ops) >= opts.reduce_from_ops) {
    std::optional<Equality> r = reduce_common_subgraphs(e);
    if (!r) {
      ++l.c.vanished;
      return;
    }
    reduced = r->lhs != e.lhs || r->rhs != e.rhs;  // the same term pointers when unchanged
    if (reduced) {
      ++l.c.reduced;
      shape_conds = conditions_within(*r, shape_conds);
      e = std::move(*r);
    }
  }
  canonicalize(e, &shape_conds);
  shape_conds = common_conditions(shape_conds, shape_conds);  // sorted in the canonical names
  auto [it, fresh] = l.c.classes.try_emplace(std::move(e.key));
  if (fresh) {
    it->second.shape_conds = std::move(shape_conds);
  } else {
    it->second.shape_conds = common_conditions(it->second.shape_conds, shape_conds);
  }
  ++it->second.pairs;
  it->second.reduced += reduced;
}

}  // namespace

void merge_classified(Classified& into, Classified from) {
  into.buckets += from.buckets;
  into.shared_graphs += from.shared_graphs;
  into.pairs += from.pairs;
  into.passed += from.passed;
  into.reduced += from.reduced;
  into.vanished += from.vanished;
  for (auto& [k, acc] : from.classes) {
    auto [it, fresh] = into.classes.try_emplace(k);
    if (fresh) {
      it->second.shape_conds = std::move(acc.shape_conds);
    } else {
      it->second.shape_conds = common_conditions(it->second.shape_conds, acc.shape_conds);
    }
    it->second.pairs += acc.pairs;
    it->second.reduced += acc.reduced;
  }
}

Classified classify_candidates(const Space& s, EnumerationResult& en, const ClassifyOptions& opts,
                               Reporter& rep) {
  const int threads = std::max(1, opts.threads);
  const size_t parts = opts.max_parts ? std::min(opts.max_parts, en.num_parts()) : en.num_parts();
  // With max_parts, the same share of the split requests (the first ones, in graph order).
  const size_t requests =
      opts.max_parts ? en.requests.size() * parts / en.num_parts() : en.requests.size();
  const size_t all_items = parts + requests + s.aliases.size();
  // This rank's items: every ranks-th from its rank on (parts, then requests, then aliases).
  std::vector<size_t> mine;
  for (size_t i = static_cast<size_t>(opts.rank); i < all_items;
       i += static_cast<size_t>(std::max(1, opts.ranks)))
    mine.push_back(i);
  const size_t n_items = mine.size();
  std::vector<Local> locals(static_cast<size_t>(threads));
  std::atomic<uint64_t> classes_seen{0};  // classes of the threads, before merging
  for (auto& l : locals) {
    l.ev = std::make_unique<GraphEvaluator>(s);
    l.alt = std::make_unique<GraphEvaluator>(s, true);
  }

  auto classify_bucket = [&](Local& l, const std::vector<GraphRecord>& records, const Bucket& b) {
    ++l.c.buckets;
    l.c.shared_graphs += b.size();
    std::vector<EvaluatedGraph> evals, floats;
    std::vector<RuleSide> sides;
    for (size_t i = b.begin; i < b.end; ++i) {
      sides.push_back(side_of(s, records[i].g));
      if (sides.back().outputs.size() == 1) {
        // One output: its value hash is the one the bucket shares (the fingerprint is the
        // hash of the output hashes), so only the pairing of outputs needs it and the
        // fingerprint stands in for it; the enumerator already ran the graph on this pool.
        EvaluatedGraph e;
        e.ok = true;
        e.outputs = sides.back().outputs;
        e.output_hashes = {records[i].fp};
        evals.push_back(std::move(e));
      } else {
        evals.push_back(evaluate_side(*l.ev, s, sides.back(), false));
      }
      floats.push_back(evaluate_side(*l.alt, s, sides.back(), true, false));
    }
    for (auto [i, j] : bucket_pairs(records, b)) {
      size_t x = i - b.begin, y = j - b.begin;
      Candidate c{sides[x], sides[y], {}, {}};
      add_candidate(s, l, c, evals[x], evals[y], floats[x], floats[y], opts);
    }
  };

  parallel_for(
      n_items, threads,
      [&](size_t index, size_t t) {
        size_t item = mine[index];
        Local& l = locals[t];
        GraphEvaluator& ev = *l.ev;
        GraphEvaluator& alt = *l.alt;
        auto add = [&](Candidate& c) {
          add_candidate(s, l, c, evaluate_side(ev, s, c.a, false), evaluate_side(ev, s, c.b, false),
                        evaluate_side(alt, s, c.a, true, false),
                        evaluate_side(alt, s, c.b, true, false), opts);
        };
        if (item < parts) {
          std::vector<GraphRecord> records = en.take_part(item);
          for (const Bucket& b : buckets_of(records))
            if (b.size() >= 2) classify_bucket(l, records, b);
          classes_seen += l.c.classes.size() - std::exchange(l.last_count, l.c.classes.size());
          return;
        }
        item -= parts;
        if (item < requests) {
          const SplitRequest& q = en.requests[item];
          std::optional<RuleSide> partner = split_partner(ev, s, en.small, q);
          if (!partner) return;
          Candidate c{side_of(s, q.g), *partner, {}, {}};
          add(c);
          return;
        }
        item -= requests;
        Candidate c = alias_candidate(s, s.aliases[item]);
        add(c);
      },
      [&](size_t done) {
        rep.progress("pair and re-test", static_cast<double>(done), static_cast<double>(n_items),
                     fmt::format("{}; {} classes on the threads",
                                 done < mine.size() && mine[done] < parts
                                     ? "fingerprint ranges"
                                     : "ranges, split requests, aliases",
                                 classes_seen.load()));
      });

  Classified out;
  out.parts_done = parts;
  for (auto& l : locals) merge_classified(out, std::move(l.c));
  return out;
}

}  // namespace graphsub::gen
