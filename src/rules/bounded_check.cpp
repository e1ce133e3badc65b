#include "rules/bounded_check.h"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <chrono>

#include "core/error.h"
#include "ir/hash.h"
#include "ir/parallel.h"

namespace graphsub::rules {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One parameter assignment of one rule: all its instances (or its first `cap`, when not 0),
// stopping at the first failure.
struct ItemResult {
  uint64_t instances = 0, exact = 0;
  bool holds = true;
  int output = -1;
  std::string counterexample;
};

ItemResult test_params(const Rule& r, const ParamAssignment& params, const Candidates& cands,
                       uint64_t item_seed, const BoundedOptions& opts, uint64_t cap = 0) {
  ItemResult res;
  auto test = [&](const Instance& in) {
    uint64_t seed = item_seed ^ (res.instances * 0x9E3779B97F4A7C15ull);
    InstanceCheck c = check_instance(r, in, seed, opts.numeric);
    ++res.instances;
    if (c.exact_checked) ++res.exact;
    if (!c.ok) {
      res.holds = false;
      res.output = c.output;
      res.counterexample = fmt::format("{}: output {}: {}", instance_str(in), c.output, c.failure);
      return false;
    }
    return true;
  };
  if (opts.max_per_params == 0) {
    for_each_instance(
        r, params, cands,
        [&](const Instance& in) { return test(in) && (cap == 0 || res.instances < cap); },
        opts.max_partial_instances);
    return res;
  }
  // A seeded random sample (sample_instances), so that it covers different ranks, groupings
  // and sizes rather than the first few shapes.
  for (const Instance& in : sample_instances(r, params, cands, opts.max_per_params, item_seed,
                                             opts.max_partial_instances))
    if (!test(in)) break;
  return res;
}

uint64_t rule_seed(const Rule& r, uint64_t seed, size_t item) {
  return hash_bytes(r.name.data(), r.name.size()) ^ (seed * 0xBF58476D1CE4E5B9ull) ^
         (item * 0x94D049BB133111EBull);
}

void merge(BoundedResult& into, const ItemResult& item, bool new_params = true) {
  into.instances += item.instances;
  into.exact += item.exact;
  if (new_params) ++into.param_sets;
  if (!item.holds && into.holds) {
    into.holds = false;
    into.output = item.output;
    into.counterexample = item.counterexample;
  }
}

// An axiom or rule that never type-checks claims nothing: most likely a mistake.
void require_instances(BoundedResult& r) {
  if (r.holds && r.instances == 0) {
    r.holds = false;
    r.counterexample = "no instance type-checks in the shape space";
  }
}

// Every parameter assignment on the `plain` candidates, then (when given) on the `split` ones.
BoundedResult test_candidates(const Rule& r, const RuleSet& domains, const Candidates& plain,
                              const Candidates* split, const BoundedOptions& opts) {
  auto t0 = Clock::now();
  BoundedResult res;
  res.name = r.name;
  auto assignments = param_assignments(r, domains);
  // The share of opts.max_instances of the next item, of `left` items (0: no bound).
  uint64_t items = assignments.size() * (split ? 2 : 1);
  auto share = [&](uint64_t left) -> uint64_t {
    if (opts.max_instances == 0 || opts.max_per_params != 0) return 0;
    uint64_t rest = opts.max_instances - std::min(opts.max_instances, res.instances);
    return std::max<uint64_t>(1, rest / std::max<uint64_t>(1, left));
  };
  auto spent = [&] { return opts.max_instances != 0 && res.instances >= opts.max_instances; };
  for (size_t i = 0; i < assignments.size() && res.holds && !spent(); ++i) {
    uint64_t left = items - (split ? 2 * i : i);
    merge(res,
          test_params(r, assignments[i], plain, rule_seed(r, opts.seed, 2 * i), opts, share(left)));
    if (res.holds && split && !spent())
      merge(res,
            test_params(r, assignments[i], *split, rule_seed(r, opts.seed, 2 * i + 1), opts,
                        share(left - 1)),
            false);
  }
  require_instances(res);
  res.seconds = since(t0);
  return res;
}

}  // namespace

BoundedResult bounded_test(const Rule& r, const RuleSet& domains, const ShapeSpace& space,
                           const BoundedOptions& opts) {
  Candidates plain = candidate_types(r, space), split = candidate_types(r, space, true);
  BoundedResult res =
      test_candidates(r, domains, plain, space.split_dims.empty() ? nullptr : &split, opts);
  if (res.instances == 0)
    if (auto fallback = space.fallback()) return bounded_test(r, domains, *fallback, opts);
  return res;
}

BoundedResult bounded_test_types(const Rule& r, const RuleSet& domains,
                                 const std::vector<TensorType>& types, const BoundedOptions& opts) {
  Candidates plain;
  for (auto& v : r.tensor_vars) plain[v] = types;
  return test_candidates(r, domains, plain, nullptr, opts);
}

bool AxiomCheckReport::all_hold() const {
  for (auto& a : axioms)
    if (!a.holds) return false;
  return true;
}

AxiomCheckReport check_axioms(const RuleSet& axioms, const ShapeSpace& space,
                              const AxiomCheckOptions& opts, Reporter& rep) {
  auto t0 = Clock::now();
  // Work items: (axiom, parameter assignment, pass); pass 1 gives the variables split points.
  struct Item {
    size_t axiom;
    size_t index;  // parameter assignment index within the axiom
    int pass;
    ParamAssignment params;
  };
  std::vector<Item> items;
  std::vector<std::array<Candidates, 2>> cands;
  int passes = space.split_dims.empty() ? 1 : 2;
  for (size_t a = 0; a < axioms.axioms.size(); ++a) {
    const Rule& r = axioms.axioms[a];
    cands.push_back({candidate_types(r, space), candidate_types(r, space, true)});
    auto ps = param_assignments(r, axioms);
    if (ps.empty())
      throw Error(
          fmt::format("axiom {}: no parameter assignment satisfies its conditions", r.name));
    for (size_t i = 0; i < ps.size(); ++i)
      for (int pass = 0; pass < passes; ++pass) items.push_back({a, i, pass, ps[i]});
  }
  std::vector<ItemResult> results(items.size());
  std::vector<double> item_seconds(items.size(), 0);
  std::atomic<size_t> done{0}, last{0};  // items tested; the latest of them, for progress
  auto progress = [&](size_t) {
    if (size_t d = done.load())
      rep.progress("check-axioms", static_cast<double>(d), static_cast<double>(items.size()),
                   axioms.axioms[items[last.load()].axiom].name);
  };
  // A failure (or a progress() that threw) ends every worker and is rethrown here.
  parallel_for(
      items.size(), opts.threads > 0 ? opts.threads : hardware_threads(),
      [&](size_t k, size_t) {
        const Item& it = items[k];
        const Rule& r = axioms.axioms[it.axiom];
        auto ti = Clock::now();
        results[k] = test_params(
            r, it.params, cands[it.axiom][static_cast<size_t>(it.pass)],
            rule_seed(r, opts.bounded.seed, 2 * it.index + static_cast<size_t>(it.pass)),
            opts.bounded);
        item_seconds[k] = since(ti);
        last = k;
        done.fetch_add(1);
      },
      progress);
  progress(0);

  AxiomCheckReport report;
  for (auto& r : axioms.axioms) report.axioms.push_back({.name = r.name});
  for (size_t k = 0; k < items.size(); ++k) {
    BoundedResult& a = report.axioms[items[k].axiom];
    merge(a, results[k], items[k].pass == 0);
    a.seconds += item_seconds[k];  // CPU time spent on the axiom
  }
  // Axioms without an instance at the space's ranks: again at its fallback ranks.
  if (auto fallback = space.fallback()) {
    RuleSet rest;
    rest.domains = axioms.domains;
    std::vector<size_t> at;
    for (size_t a = 0; a < report.axioms.size(); ++a)
      if (report.axioms[a].holds && report.axioms[a].instances == 0) {
        rest.axioms.push_back(axioms.axioms[a]);
        at.push_back(a);
      }
    if (!rest.axioms.empty()) {
      AxiomCheckReport again = check_axioms(rest, *fallback, opts, rep);
      for (size_t k = 0; k < at.size(); ++k) report.axioms[at[k]] = again.axioms[k];
    }
  }
  for (auto& a : report.axioms) {
    require_instances(a);
    report.instances += a.instances;
    report.exact += a.exact;
  }
  report.seconds = since(t0);
  return report;
}

}  // namespace graphsub::rules
