#include "gen/generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "gen/candidates.h"
#include "gen/classify.h"
#include "gen/common_subgraph.h"
#include "gen/enumerate.h"
#include "gen/param_lift.h"
#include "gen/space.h"
#include "ir/error.h"
#include "ir/parallel.h"
#include "ir/process_stats.h"

namespace graphsub::gen {

rules::Rule to_rule(const Equality& e, const std::string& name, bool reversed) {
  rules::Rule r;
  r.name = name;
  r.source = reversed ? e.rhs : e.lhs;
  r.target = reversed ? e.lhs : e.rhs;
  std::vector<rules::TermPtr> all = r.source;
  all.insert(all.end(), r.target.begin(), r.target.end());
  r.tensor_vars = variables_of(all);
  r.constraints = e.conditions;
  for (auto& p : param_vars_of(all)) r.param_vars.push_back({p, param_var_domain(p)});
  return r;
}

bool usable_direction(const std::vector<rules::TermPtr>& src,
                      const std::vector<rules::TermPtr>& dst) {
  for (auto& t : src)
    if (t->kind != rules::Term::Kind::App) return false;
  std::vector<std::string> sv = variables_of(src), sp = param_vars_of(src);
  std::set<std::string> bound(sv.begin(), sv.end());
  bound.insert(sp.begin(), sp.end());
  for (auto& v : variables_of(dst))
    if (!bound.count(v)) return false;
  for (auto& v : param_vars_of(dst))
    if (!bound.count(v)) return false;
  return true;
}

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A class of candidates equal up to renaming.
struct RuleClass {
  Equality eq;
  uint64_t pairs = 0;    // candidates in the class
  uint64_t reduced = 0;  // of which larger candidates reduced into it
  int vars = 0;          // distinct variables
  int general = -1;      // index of a more general class (same skeleton), -1 if none
  enum State { Pending, Proved, Implied, Failed } state = Pending;
  bool by_lift = false;                     // implied by a proven rule with a parameter variable
  std::vector<rules::TermPtr> shape_conds;  // shape conditions that held in all its candidates
  bool conditional = false;                 // proved only under `shape_conds` (not as stated)
  std::string reason;
  // When Failed: the class whose own proof failed (itself, or the more general form that made
  // trying this one pointless) and that proof's reason.
  std::string failed_key, failed_reason;
  // Holds for every instance, so its renaming instances hold too.
  bool holds_always() const { return (state == Proved || state == Implied) && !conditional; }
};

int num_vars(const Equality& e) {
  std::vector<rules::TermPtr> all = e.lhs;
  all.insert(all.end(), e.rhs.begin(), e.rhs.end());
  return static_cast<int>(variables_of(all).size());
}

// Marks `c` failed without a call because a more general form of it (a class that passed the
// float re-test) was not proved: `c` follows from that form where it holds, and fails for the
// same reason almost always (TASO prunes before it verifies).
// `key`, `reason`: the form whose proof failed and why.
void skip_for(RuleClass& c, const std::string& key, const std::string& reason) {
  c.state = RuleClass::Failed;
  c.failed_key = key;
  c.failed_reason = reason;
  c.reason = fmt::format("not tried: its more general form {} was not proved ({})", key, reason);
}

// True when a failure of the more general class `g` settles the class `c`. Not when `c` has
// shape conditions to be retried under that `g` lacks (it may hold under them), nor when
// `g` got no verdict from the prover (not expressible as a rule).
bool failure_carries_over(const RuleClass& c, const RuleClass& g) {
  return g.state == RuleClass::Failed && !g.failed_key.empty() &&
         (c.shape_conds.empty() || !g.shape_conds.empty());
}

// Per-call times of the prover, by verdict kind (for the time report).
struct CallTimes {
  std::map<std::string, std::vector<double>> ms;
  std::map<std::string, ProverTimes> totals;
  void add(const ProofOutcome& o) {
    std::string k = o.kind.empty() ? (o.proved ? "proved" : "not proved") : o.kind;
    ms[k].push_back(o.numeric_ms + o.solver_ms);
    ProverTimes& t = totals[k];
    ++t.calls;
    t.numeric_ms += o.numeric_ms;
    t.solver_ms += o.solver_ms;
    t.max_resources = std::max(t.max_resources, o.resources);
  }
  std::map<std::string, ProverTimes> summary() {
    for (auto& [k, v] : ms) {
      std::sort(v.begin(), v.end());
      totals[k].median_ms = v[v.size() / 2];
      totals[k].max_ms = v.back();
    }
    return totals;
  }
};

// The kind of outcome of an equality that was not sent to the prover: no direction of it is
// a rule.
constexpr const char* kNotExpressible = "not expressible";
// Nor of one with more tensor variables than GeneratorOptions::max_prover_vars.
constexpr const char* kTooManyVars = "too many variables";

// Proves the equalities `eqs` with the prover, each as a rule in a direction the rule
// language can state; one outcome each. An equality with no such direction (a variable on
// both sides' outputs) is not proved.
std::vector<ProofOutcome> prove_all(const Prover& prove, const std::vector<const Equality*>& eqs,
                                    int max_vars, uint64_t& calls, CallTimes& times) {
  std::vector<ProofOutcome> out(eqs.size());
  std::vector<rules::Rule> batch;
  std::vector<size_t> where;
  for (size_t i = 0; i < eqs.size(); ++i) {
    const Equality& e = *eqs[i];
    bool fwd = usable_direction(e.lhs, e.rhs);
    if (!fwd && !usable_direction(e.rhs, e.lhs)) {
      out[i].reason = "not expressible as a rule (a bare variable or unbound variable either way)";
      out[i].kind = kNotExpressible;
      continue;
    }
    if (int n = num_vars(e); max_vars > 0 && n > max_vars) {
      out[i].reason = fmt::format(
          "not tried: {} tensor variables, more than the {} the prover is given (--max-vars)", n,
          max_vars);
      out[i].kind = kTooManyVars;
      continue;
    }
    batch.push_back(to_rule(e, fmt::format("c{}", i), !fwd));
    where.push_back(i);
  }
  calls += batch.size();
  if (batch.empty()) return out;
  std::vector<ProofOutcome> got = prove(batch);
  if (got.size() != batch.size()) throw Error("prover returned the wrong number of outcomes");
  for (size_t k = 0; k < where.size(); ++k) {
    times.add(got[k]);
    out[where[k]] = std::move(got[k]);
  }
  return out;
}

// Verdicts on rules by canonical key, and the common-subgraph bookkeeping: which valid rules
// are covered by a valid more general one.
class Pruner {
 public:
  Pruner(const Prover& prove, int max_vars, uint64_t& calls)
      : prove_(prove), max_vars_(max_vars), calls_(calls) {}

  std::vector<ProofOutcome> prove(const std::vector<const Equality*>& eqs) {
    std::vector<ProofOutcome> out = prove_all(prove_, eqs, max_vars_, calls_, times_);
    for (auto& o : out) too_many_vars_ += o.kind == kTooManyVars;
    return out;
  }
  uint64_t too_many_vars() const { return too_many_vars_; }
  std::map<std::string, ProverTimes> times() { return times_.summary(); }
  // Records a verdict; `redundant` when a more general valid rule covers it.
  void mark(const Equality& e, bool valid, bool redundant) {
    verdict_[e.key] = valid;
    eqs_.emplace(e.key, e);
    if (redundant) redundant_.insert(e.key);
  }
  // Canonical generalizations of `e` (memoized).
  const std::vector<std::string>& generalizations(const Equality& e) {
    auto it = gens_.find(e.key);
    if (it != gens_.end()) return it->second;
    std::vector<Equality> gs = input_generalizations(e);
    if (auto o = output_generalization(e)) gs.push_back(*o);
    std::vector<std::string> keys;
    for (auto& g : gs) {
      canonicalize(g);
      if (g.key == e.key) continue;
      keys.push_back(g.key);
      eqs_.emplace(g.key, std::move(g));
    }
    return gens_.emplace(e.key, std::move(keys)).first->second;
  }
  bool has_valid_generalization(const Equality& e) {
    for (auto& g : generalizations(e)) {
      auto it = verdict_.find(g);
      if (it != verdict_.end() && it->second) return true;
    }
    return false;
  }
  // Decides every generalization of `eqs` not decided yet (proving them, smallest first: a
  // generalization covered by a valid one of its own is valid without a proof).
  void resolve_generalizations(const std::vector<const Equality*>& eqs) {
    std::set<std::string> open;
    for (const Equality* e : eqs)
      for (auto& g : generalizations(*e))
        if (!verdict_.count(g)) open.insert(g);
    while (!open.empty()) {
      // Generalizations of the open ones first (they are smaller).
      std::set<std::string> deeper;
      for (auto& k : open)
        for (auto& g : generalizations(eqs_.at(k)))
          if (!verdict_.count(g) && !open.count(g)) deeper.insert(g);
      if (!deeper.empty()) {
        resolve_generalizations_keys(deeper);
        continue;
      }
      std::vector<const Equality*> todo;
      std::vector<std::string> keys;
      for (auto& k : open) {
        const Equality& e = eqs_.at(k);
        if (has_valid_generalization(e)) {
          mark(e, true, true);
          continue;
        }
        todo.push_back(&e);
        keys.push_back(k);
      }
      uint64_t before = calls_;
      std::vector<ProofOutcome> out = prove(todo);
      generalization_calls_ += calls_ - before;
      for (size_t i = 0; i < keys.size(); ++i) {
        mark(eqs_.at(keys[i]), out[i].proved, false);
        if (out[i].proved) ++generalizations_proved_;
      }
      open.clear();
    }
  }
  // Valid rules covered by nothing more general, sorted by key.
  std::vector<Equality> irredundant() const {
    std::vector<Equality> out;
    for (auto& [k, valid] : verdict_)
      if (valid && !redundant_.count(k)) out.push_back(eqs_.at(k));
    return out;  // std::map order: by key
  }
  uint64_t generalizations_kept() const {
    uint64_t n = 0;
    for (auto& [k, valid] : verdict_)
      if (valid && !redundant_.count(k) && !classes_.count(k)) ++n;
    return n;
  }
  void note_class(const std::string& key) { classes_.insert(key); }
  // Calls made to decide generalizations (the rest are for classes and lifted rules).
  uint64_t generalization_calls() const { return generalization_calls_; }

 private:
  void resolve_generalizations_keys(const std::set<std::string>& keys) {
    std::vector<const Equality*> eqs;
    for (auto& k : keys) eqs.push_back(&eqs_.at(k));
    // Treat them as the rules whose generalizations must be known, then decide them.
    resolve_generalizations(eqs);
    std::vector<const Equality*> todo;
    std::vector<std::string> ks;
    for (auto& k : keys) {
      if (verdict_.count(k)) continue;
      const Equality& e = eqs_.at(k);
      if (has_valid_generalization(e)) {
        mark(e, true, true);
        continue;
      }
      todo.push_back(&e);
      ks.push_back(k);
    }
    uint64_t before = calls_;
    std::vector<ProofOutcome> out = prove(todo);
    generalization_calls_ += calls_ - before;
    for (size_t i = 0; i < ks.size(); ++i) {
      mark(eqs_.at(ks[i]), out[i].proved, false);
      if (out[i].proved) ++generalizations_proved_;
    }
  }

  const Prover& prove_;
  int max_vars_;
  uint64_t& calls_;
  uint64_t too_many_vars_ = 0;
  CallTimes times_;
  std::map<std::string, bool> verdict_;
  std::map<std::string, Equality> eqs_;
  std::map<std::string, std::vector<std::string>> gens_;
  std::set<std::string> redundant_, classes_;
  uint64_t generalizations_proved_ = 0;
  uint64_t generalization_calls_ = 0;
};

}  // namespace

GeneratorResult run_generator(const GeneratorOptions& opts, const Prover& prove, Reporter& rep) {
  GeneratorResult res;
  auto t_all = Clock::now();
  auto stage = [&](const std::string& name, uint64_t count, Clock::time_point t0) {
    res.stages.push_back({name, count, since(t0)});
    rep.info(fmt::format("{:<32} {:>12}   {:8.2f} s", name, count, res.stages.back().seconds));
  };

  // ---- search space ----
  std::vector<PoolTensor> pool = opts.pool.empty() ? default_pool() : opts.pool;
  std::vector<std::string> ops = opts.ops.empty() ? all_generator_ops() : opts.ops;
  Space space = make_space(make_variants(ops, opts.domains, pool), pool, opts.max_ops, opts.seed);
  space.minimal_reads =
      opts.minimal_reads_from_ops > 0 && opts.max_ops >= opts.minimal_reads_from_ops;
  res.minimal_reads = space.minimal_reads;
  for (auto& v : space.variants)
    res.variants.push_back(v.label() + (v.commutative ? " (commutative)" : ""));

  // ---- enumeration ----
  auto t0 = Clock::now();
  EnumerationResult en = enumerate_graphs(space, opts.threads, rep);
  res.graphs = en.stats.graphs;
  res.redundant_values = en.stats.redundant;
  stage("graphs enumerated", en.stats.graphs, t0);
  res.unrepresentative_graphs = en.stats.unrepresentative;
  if (space.minimal_reads)
    rep.info(
        fmt::format("  ({} values of the largest graphs not representatives, left unread; {} "
                    "graphs with such a partial output left out)",
                    en.stats.redundant, en.stats.unrepresentative));
  rep.info(fmt::format("  ({} split requests; {:.1f} MiB of graphs streamed to temporary files)",
                       en.requests.size(), static_cast<double>(en.spilled_bytes) / (1 << 20)));

  // ---- buckets, candidates, numerical re-test, classes up to renaming ----
  // One fingerprint range at a time: the buckets are counted as they are classified.
  t0 = Clock::now();
  ClassifyOptions co;
  co.threads = opts.threads;
  co.tolerance = opts.tolerance;
  co.reduce_from_ops = opts.reduce_from_ops;
  co.max_parts = opts.max_parts;
  Classified cl = classify_candidates(space, en, co, rep);
  res.reduced_pairs = cl.reduced;
  res.reduce_from_ops = opts.reduce_from_ops;
  res.vanished_pairs = cl.vanished;
  res.classes = cl.classes.size();
  res.parts_classified = cl.parts_done;
  en = EnumerationResult{};
  res.stages.push_back({"buckets (fingerprints shared)", cl.buckets, 0});
  rep.info(fmt::format("{:<32} {:>12}   ({} graphs)", "buckets (fingerprints shared)", cl.buckets,
                       cl.shared_graphs));
  res.stages.push_back({"candidate pairs", cl.pairs, 0});
  rep.info(fmt::format("{:<32} {:>12}", "candidate pairs", cl.pairs));
  stage("after float re-test", cl.passed, t0);
  if (cl.reduced || cl.vanished) {
    // Only where reduction happened (max_ops 4), so that smaller libraries keep their header.
    res.stages.push_back({"classified in reduced form", cl.reduced, 0});
    rep.info(fmt::format("{:<32} {:>12}   ({} reduced to identical sides, dropped)",
                         "classified in reduced form", cl.reduced, cl.vanished));
  }
  if (opts.max_parts)
    rep.info(
        fmt::format("  (only {} of the fingerprint ranges classified: --parts)", cl.parts_done));
  rep.info(fmt::format("  ({} classes up to renaming; peak memory so far {:.0f} MiB)",
                       cl.classes.size(), process_peak_rss_mib()));
  // The classes' terms, rebuilt from their keys (in parallel; each map node is freed as it is
  // taken, so keys and terms are not all held twice).
  std::vector<RuleClass> classes(cl.classes.size());
  std::vector<std::string> keys;
  keys.reserve(cl.classes.size());
  for (auto it = cl.classes.begin(); it != cl.classes.end(); it = cl.classes.erase(it)) {
    RuleClass& c = classes[keys.size()];
    c.pairs = it->second.pairs;
    c.reduced = it->second.reduced;
    c.shape_conds = std::move(it->second.shape_conds);
    keys.push_back(it->first);
  }
  parallel_for(
      classes.size(), opts.threads,
      [&](size_t i, size_t) {
        classes[i].eq = equality_from_key(keys[i]);
        std::string().swap(keys[i]);
      },
      [&](size_t done) {
        rep.progress("classes", static_cast<double>(done), static_cast<double>(classes.size()));
      });
  std::vector<std::string>().swap(keys);
  // Most general forms: within a skeleton, a class that is a renaming instance of one with
  // more variables depends on it.
  std::map<std::string, std::vector<size_t>> by_skeleton;
  for (size_t i = 0; i < classes.size(); ++i) {
    classes[i].vars = num_vars(classes[i].eq);
    by_skeleton[classes[i].eq.skeleton].push_back(i);
  }
  size_t skeletons_done = 0;
  for (auto& [skel, members] : by_skeleton) {
    if (++skeletons_done % 256 == 0)  // a progress report (and a chance to cancel) now and then
      rep.progress("most general forms", static_cast<double>(skeletons_done),
                   static_cast<double>(by_skeleton.size()));
    for (size_t i : members)
      for (size_t j : members)
        if (classes[j].vars > classes[i].vars && is_instance(classes[i].eq, classes[j].eq) &&
            (classes[i].general < 0 ||
             classes[j].vars > classes[static_cast<size_t>(classes[i].general)].vars))
          classes[i].general = static_cast<int>(j);
  }

  // ---- verification, smallest rules first ----
  // A class needs no proof of its own when it is a renaming instance of a proven class, or
  // when one of its common-subgraph generalizations holds (it is then also redundant).
  t0 = Clock::now();
  Pruner pr(prove, opts.max_prover_vars, res.verifier_calls);
  std::map<std::string, size_t> class_of_key;
  for (size_t i = 0; i < classes.size(); ++i) {
    pr.note_class(classes[i].eq.key);
    class_of_key.emplace(classes[i].eq.key, i);
  }

  // Lifted rules first, most general first: a proven one implies all its classes.
  std::vector<Lift> lifts;
  uint64_t valid_lifts = 0;
  if (!opts.lift_domains.empty()) {
    // Most general classes only: renaming instances follow from them.
    std::vector<const Equality*> ceqs;
    std::vector<size_t> which;
    for (size_t i = 0; i < classes.size(); ++i)
      if (classes[i].general < 0) {
        ceqs.push_back(&classes[i].eq);
        which.push_back(i);
      }
    lifts = find_lifts(ceqs, opts.lift_domains, opts.threads, rep);
    for (auto& lf : lifts)
      for (auto& m : lf.members) m = which[m];
  }
  for (size_t l = 0; l < lifts.size();) {
    size_t l_end = l;
    while (l_end < lifts.size() && lifts[l_end].level == lifts[l].level) ++l_end;
    rep.progress("prove lifted rules", static_cast<double>(l), static_cast<double>(lifts.size()));
    std::vector<const Equality*> todo, gen_of;
    std::vector<size_t> todo_idx;
    auto covered = [&](const Lift& lf) {
      for (size_t m : lf.members)
        if (classes[m].state == RuleClass::Pending) return false;
      return true;
    };
    for (size_t k = l; k < l_end; ++k)
      if (!covered(lifts[k])) gen_of.push_back(&lifts[k].eq);
    pr.resolve_generalizations(gen_of);
    // Marks the classes of a valid lifted rule implied; a lifted rule that adds none (its
    // classes were covered by another one) is itself redundant.
    auto imply_members = [&](const Lift& lf) {
      uint64_t added = 0;
      for (size_t m : lf.members) {
        RuleClass& c = classes[m];
        if (c.state != RuleClass::Pending) continue;
        c.state = RuleClass::Implied;
        c.by_lift = true;
        ++res.implied;
        ++added;
        pr.mark(c.eq, true, true);
      }
      if (added) ++valid_lifts;
      return added;
    };
    for (size_t k = l; k < l_end; ++k) {
      if (covered(lifts[k])) continue;
      if (pr.has_valid_generalization(lifts[k].eq)) {
        pr.mark(lifts[k].eq, true, true);
        imply_members(lifts[k]);
        continue;
      }
      todo.push_back(&lifts[k].eq);
      todo_idx.push_back(k);
    }
    std::vector<ProofOutcome> out = pr.prove(todo);
    for (size_t k = 0; k < todo_idx.size(); ++k) {
      if (!out[k].proved) {
        pr.mark(lifts[todo_idx[k]].eq, false, false);
        continue;
      }
      bool adds = imply_members(lifts[todo_idx[k]]) > 0;
      pr.mark(lifts[todo_idx[k]].eq, true, !adds);
    }
    l = l_end;
  }
  std::vector<size_t> order(classes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<int> sizes(classes.size());
  parallel_for(
      classes.size(), opts.threads,
      [&](size_t i, size_t) {
        sizes[i] = count_ops(classes[i].eq.lhs) + count_ops(classes[i].eq.rhs);
      },
      [&](size_t done) {
        rep.progress("classes", static_cast<double>(done), static_cast<double>(classes.size()));
      });
  auto size_of = [&](size_t i) { return sizes[i]; };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return size_of(a) < size_of(b); });
  for (size_t w = 0; w < order.size();) {
    size_t w_end = w;
    while (w_end < order.size() && size_of(order[w_end]) == size_of(order[w])) ++w_end;
    std::vector<size_t> wave(order.begin() + static_cast<std::ptrdiff_t>(w),
                             order.begin() + static_cast<std::ptrdiff_t>(w_end));
    rep.progress("prove", static_cast<double>(w), static_cast<double>(order.size()),
                 fmt::format("rules of {} operators", size_of(order[w])));
    // Most general classes of the wave first, then their instances.
    for (int pass = 0; pass < 2; ++pass) {
      std::vector<const Equality*> todo;
      std::vector<size_t> todo_idx;
      std::vector<const Equality*> gen_of;
      for (size_t i : wave) {
        RuleClass& c = classes[i];
        bool instance = c.general >= 0;
        if ((pass == 0) == instance || c.state != RuleClass::Pending) continue;
        if (instance) {
          bool implied = false;
          for (int g = c.general; g >= 0 && !implied; g = classes[static_cast<size_t>(g)].general)
            implied = classes[static_cast<size_t>(g)].holds_always();
          if (implied) {
            c.state = RuleClass::Implied;
            ++res.implied;
            pr.mark(c.eq, true, true);
            continue;
          }
        }
        if (pr.has_valid_generalization(c.eq)) continue;  // implied below
        // Prune before proving: a more general form that is a class and was not proved.
        const RuleClass* failed = nullptr;
        for (int g = c.general; g >= 0 && !failed; g = classes[static_cast<size_t>(g)].general)
          if (failure_carries_over(c, classes[static_cast<size_t>(g)]))
            failed = &classes[static_cast<size_t>(g)];
        for (auto& k : pr.generalizations(c.eq)) {
          if (failed) break;
          auto it = class_of_key.find(k);
          if (it != class_of_key.end() && failure_carries_over(c, classes[it->second]))
            failed = &classes[it->second];
        }
        if (failed) {
          skip_for(c, failed->failed_key, failed->failed_reason);
          ++res.not_tried;
          pr.mark(c.eq, false, false);
          continue;
        }
        gen_of.push_back(&c.eq);
      }
      pr.resolve_generalizations(gen_of);
      for (size_t i : wave) {
        RuleClass& c = classes[i];
        if ((pass == 0) == (c.general >= 0) || c.state != RuleClass::Pending) continue;
        if (pr.has_valid_generalization(c.eq)) {
          c.state = RuleClass::Implied;
          ++res.implied;
          pr.mark(c.eq, true, true);
          continue;
        }
        todo.push_back(&c.eq);
        todo_idx.push_back(i);
      }
      std::vector<ProofOutcome> out = pr.prove(todo);
      // A class not proved as stated (refuted, or the solver gave up) whose candidates all had
      // dense convs (kernel reading every input channel) or aligned matmuls is retried under
      // those shape conditions: e.g. merging two convs through a concat of kernels holds for
      // dense convs only (concat changes a grouped conv's groups), and summing two matmuls as
      // one over concatenated operands needs each operand pair's inner sizes to agree, which
      // the solver cannot know without the condition. Not only refuted ones: the numeric test
      // samples a few instances and may miss the grouped ones that refute it.
      std::vector<Equality> conditioned;
      std::vector<size_t> retried;
      for (size_t k = 0; k < todo_idx.size(); ++k) {
        const RuleClass& c = classes[todo_idx[k]];
        if (out[k].proved || c.shape_conds.empty() || !out[k].retry_under_conditions()) continue;
        Equality ce = c.eq;
        ce.conditions = c.shape_conds;
        canonicalize(ce);
        conditioned.push_back(std::move(ce));
        retried.push_back(k);
      }
      std::vector<const Equality*> cond_todo;
      for (auto& ce : conditioned) cond_todo.push_back(&ce);
      std::vector<ProofOutcome> cond_out = pr.prove(cond_todo);
      for (size_t j = 0; j < retried.size(); ++j) {
        RuleClass& c = classes[todo_idx[retried[j]]];
        if (cond_out[j].proved) {
          c.conditional = true;
          ++res.conditional;
          pr.mark(conditioned[j], true, false);
        } else {
          out[retried[j]].reason += "; under shape conditions: " + cond_out[j].reason;
        }
      }
      for (size_t k = 0; k < todo_idx.size(); ++k) {
        RuleClass& c = classes[todo_idx[k]];
        bool proved = out[k].proved || c.conditional;
        c.state = proved ? RuleClass::Proved : RuleClass::Failed;
        c.reason = out[k].reason;
        // A prover verdict (not "not expressible": an instance may be expressible).
        if (!proved && out[k].kind != kNotExpressible && out[k].kind != kTooManyVars) {
          c.failed_key = c.eq.key;
          c.failed_reason = c.reason;
        }
        pr.mark(c.eq, out[k].proved, false);
      }
    }
    w = w_end;
  }
  uint64_t proved_pairs = 0;
  for (auto& c : classes)
    if (c.state == RuleClass::Proved || c.state == RuleClass::Implied) proved_pairs += c.pairs;
  stage("proved", proved_pairs, t0);
  res.prover_times = pr.times();
  res.generalization_calls = pr.generalization_calls();
  res.too_many_vars = pr.too_many_vars();
  if (res.too_many_vars)
    rep.info(fmt::format("  ({} rules not sent to the prover: more than {} tensor variables)",
                         res.too_many_vars, opts.max_prover_vars));
  for (auto& c : classes)
    if (c.state == RuleClass::Failed) res.unproved.push_back({c.eq, c.reason, c.pairs, c.reduced});

  // ---- renaming: one most general form per class ----
  t0 = Clock::now();
  uint64_t after_renaming = 0;
  for (auto& c : classes) {
    if (c.state == RuleClass::Failed) continue;
    bool instance_of_valid = false;
    for (int g = c.general; g >= 0; g = classes[static_cast<size_t>(g)].general)
      instance_of_valid = instance_of_valid || classes[static_cast<size_t>(g)].holds_always();
    after_renaming += !instance_of_valid;
  }
  stage("after renaming", after_renaming, t0);
  // Parameter lifting: the classes a proven lifted rule covers are instances of it.
  t0 = Clock::now();
  uint64_t after_lifting = 0;
  for (auto& c : classes) {
    if (c.state == RuleClass::Failed) continue;
    bool instance_of_valid = false;
    for (int g = c.general; g >= 0; g = classes[static_cast<size_t>(g)].general)
      instance_of_valid = instance_of_valid || classes[static_cast<size_t>(g)].holds_always();
    after_lifting += !instance_of_valid && !c.by_lift;
  }
  after_lifting += valid_lifts;
  stage("after parameter lifting", after_lifting, t0);

  // ---- common-subgraph pruning: the valid rules that nothing more general covers ----
  t0 = Clock::now();
  res.rules = pr.irredundant();
  res.generalized = pr.generalizations_kept();
  for (auto& e : res.rules)
    res.lifted += !param_vars_of(e.lhs).empty() || !param_vars_of(e.rhs).empty();
  stage("after common-subgraph pruning", res.rules.size(), t0);

  res.seconds = since(t_all);
  res.peak_rss_bytes = process_peak_rss_bytes();
  return res;
}

}  // namespace graphsub::gen
