#include "opt/search/search.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <set>

#include "core/error.h"
#include "ir/hash.h"
#include "ir/process_stats.h"
#include "opt/match/graph_hashing.h"
#include "opt/match/graph_index.h"
#include "opt/transforms/rewrite.h"
#include "opt/search/application_price.h"

namespace graphsub::opt {
namespace {

using Clock = std::chrono::steady_clock;

// Rewrites leave holes in the node table; renumber once they dominate, so long rewrite chains
// do not grow the table. Depends only on the graph, so replays renumber identically.
bool needs_compaction(const Graph& g) {
  return g.num_slots() > 2 * g.num_nodes() + 64;
}
void normalize(Graph& g) {
  if (needs_compaction(g)) g.compact();
}

// Persistent list of the steps that led to a graph (shared by all its descendants).
struct History {
  Step step;
  std::shared_ptr<const History> parent;
};

std::vector<Step> unwind(const std::shared_ptr<const History>& h) {
  std::vector<Step> steps;
  for (auto p = h; p; p = p->parent) steps.push_back(p->step);
  return {steps.rbegin(), steps.rend()};
}

// A queued graph, as a patch to a base graph (the input, or a graph the search renumbered):
// it holds only the nodes in which it differs, so a full queue of a large graph costs memory
// in proportion to the rewrites, not to the queue length times the graph size. Its node
// hashes and costs are computed when it is taken from the queue (most queued graphs never
// are).
struct Entry {
  std::shared_ptr<const Graph> base;
  GraphPatch patch;
  std::shared_ptr<const History> history;
};

// A graph's patch is against its base; once it has drifted this far from the base (a
// fraction of the table), the expanded graph becomes the base of its children.
bool needs_new_base(const Graph& base, const GraphPatch& patch) {
  return patch.nodes.size() * 8 > base.num_slots() + 64;
}

// Per-node costs of a whole graph.
std::vector<double> all_costs(const Graph& g, const std::vector<uint8_t>& constant,
                              CostModel& model) {
  std::vector<double> c(g.num_slots(), 0);
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id)) c[id] = model.node_cost(g, id, constant);
  return c;
}

using Key = std::pair<double, uint64_t>;  // (cost, discovery order): deterministic ties

// A candidate replaces the best graph only when it is cheaper by more than this fraction.
// Incremental costs differ from the parent's in their last bits even when a rewrite changes
// nothing that costs (enlarging a 3x3 kernel to 3x3, a no-op computed ahead of run time), and
// such rewrites would otherwise be reported as the result's rules applied.
constexpr double kTieTolerance = 1e-9;

// Cost of a candidate from its parent's: the parent's total, less the nodes the rewrite
// removed, plus the nodes it added (ids at or past the parent's table size).
double candidate_cost(const Graph& parent, const std::vector<double>& parent_costs,
                      double parent_total, const std::vector<uint8_t>& parent_constant,
                      const Graph& child, CostModel& model, std::vector<uint8_t>& constant) {
  double c = parent_total;
  size_t n = parent.num_slots();
  for (NodeId id = 0; id < n; ++id)
    if (parent.alive(id) && !child.alive(id)) c -= parent_costs[id];
  if (child.num_slots() <= n) return c;
  constant.assign(child.num_slots(), 0);  // the caller's buffer, reused across candidates
  std::copy(parent_constant.begin(), parent_constant.end(), constant.begin());
  for (NodeId id = static_cast<NodeId>(n); id < child.num_slots(); ++id) {
    if (!child.alive(id)) continue;
    const Node& node = child.node(id);
    if (node.is_source()) {
      constant[id] = node.is_input() ? 0 : 1;
      continue;
    }
    bool all = node.op->cls != OpClass::Opaque && !node.inputs.empty();
    for (auto r : node.inputs) all = all && constant[r.node];
    constant[id] = all;
    c += model.node_cost(child, id, constant);
  }
  return c;
}

// The cheapest distinct graphs found (by canonical hash; the input excluded), at most `n`:
// the best and its runners-up. Hashing is paid only by a graph cheap enough to enter.
class Finalists {
 public:
  Finalists(size_t n, const Graph& input) : n_(n) {
    if (n_ > 1) input_hash_ = graph_hash(input, node_hashes(input));
  }

  void offer(const Graph& g, Key key) {
    if (n_ <= 1) return;
    if (by_key_.size() >= n_ && !(key < std::prev(by_key_.end())->first)) return;
    uint64_t h = graph_hash(g, node_hashes(g));
    if (h == input_hash_) return;
    auto known = by_hash_.find(h);
    if (known != by_hash_.end()) {
      if (!(key < known->second)) return;
      by_key_.erase(known->second);
    }
    by_key_.emplace(key, std::make_pair(h, g));
    by_hash_[h] = key;
    if (by_key_.size() > n_) {
      by_hash_.erase(std::prev(by_key_.end())->second.first);
      by_key_.erase(std::prev(by_key_.end()));
    }
  }

  // All but `best`, cheapest first, priced exactly.
  std::vector<RunnerUp> runners_up(const Graph& best, CostModel& model) const {
    std::vector<RunnerUp> out;
    if (n_ <= 1) return out;
    uint64_t best_hash = graph_hash(best, node_hashes(best));
    for (const auto& [key, entry] : by_key_)
      if (entry.first != best_hash && out.size() + 1 < n_)
        out.push_back(RunnerUp{entry.second, model.graph_cost(entry.second)});
    return out;
  }

 private:
  size_t n_;
  uint64_t input_hash_ = 0;
  std::map<Key, std::pair<uint64_t, Graph>> by_key_;
  std::map<uint64_t, Key> by_hash_;
};

}  // namespace

SearchResult search(const Graph& input, const std::vector<const Transform*>& transforms,
                    CostModel& model, const SearchOptions& opts, Reporter& reporter) {
  auto start = Clock::now();
  double cpu_start = process_cpu_seconds();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  SearchResult res;
  res.best = input;
  res.initial_cost = res.best_cost = model.graph_cost(input);
  std::shared_ptr<const History> best_history;
  Finalists finalists(opts.finalists, input);

  std::map<Key, Entry> queue;
  std::set<uint64_t> seen;  // canonical hashes of the graphs expanded so far
  uint64_t order = 0;
  {
    auto base = std::make_shared<const Graph>(input);
    GraphPatch whole = input.diff_from(*base);  // empty but for the outputs
    queue.emplace(Key{res.initial_cost, order++}, Entry{base, std::move(whole), nullptr});
  }
  size_t queued_nodes = 0;  // node slots in the queued patches
  std::vector<NodeId> topo;
  std::vector<uint8_t> child_constant;  // candidate_cost's scratch
  // Buffers kept across graphs: matches, the replacements described, pricing's work vectors.
  std::vector<Match> matches;
  std::vector<Replacement> reps;
  PriceBuffers pbuf;
  res.stopped_by = "exhausted";
  bool out_of_time = false;

  while (!queue.empty()) {
    if (res.expanded >= opts.budget) {
      res.stopped_by = "budget";
      break;
    }
    if (opts.time_limit_s > 0 && elapsed() >= opts.time_limit_s) out_of_time = true;
    if (out_of_time) break;
    auto top = queue.begin();
    Entry cur = std::move(top->second);
    queue.erase(top);
    queued_nodes -= cur.patch.nodes.size();

    // Deduplicate by the canonical hash; renumber first when holes dominate.
    Graph g = cur.base->patched(cur.patch);
    std::shared_ptr<const Graph> base = cur.base;  // what the children are patches against
    if (needs_compaction(g) || needs_new_base(*base, cur.patch)) {
      normalize(g);
      base = std::make_shared<const Graph>(g);
    }
    std::vector<uint64_t> hashes = node_hashes(g);
    if (!seen.insert(graph_hash(g, hashes)).second) {
      ++res.duplicates;
      continue;
    }
    hashes = {};
    ++res.expanded;
    const std::vector<uint8_t> constant = constant_nodes(g);
    const std::vector<double> costs = all_costs(g, constant, model);
    double total = model.per_graph_cost();
    for (NodeId id = 0; id < g.num_slots(); ++id)
      if (g.alive(id)) total += costs[id];
    GraphIndex ix(g);
    std::vector<uint32_t> position(g.num_slots(), 0);  // topological, for rewrite_acyclic
    topological_order(g, topo);
    for (size_t i = 0; i < topo.size(); ++i) position[topo[i]] = static_cast<uint32_t>(i);

    // The search's verdict on a candidate's price (false: a graph of this cost would be
    // discarded, so it is not built). Called once per application.
    auto admit = [&](double c) {
      ++res.generated;
      if (out_of_time) return false;
      if (opts.time_limit_s > 0 && (res.generated & 63) == 0 && elapsed() >= opts.time_limit_s) {
        out_of_time = true;
        return false;
      }
      if (!(c < opts.alpha * res.best_cost)) return false;
      // A full queue would drop this graph at once.
      if (queue.size() >= opts.max_queue && !(Key{c, order} < std::prev(queue.end())->first)) {
        ++res.dropped;
        return false;
      }
      return true;
    };
    const ParentCosts parent{costs, total, constant, model};
    ScratchGraph scratch;  // `g` plus the application being described

    for (size_t ti = 0; ti < transforms.size() && !out_of_time; ++ti) {
      const Transform& t = *transforms[ti];
      const size_t num_matches = t.find(ix, matches);
      for (size_t k = 0; k < num_matches; ++k) {
        const Match& m = matches[k];
        // Priced from the applier's description; most applications are refused here, before
        // their graph is built.
        {
          Builder described(g, scratch, reps);
          if (!t.apply(ix, m, described)) continue;
          std::optional<double> price = price_description(ix, described, m.internal, parent, pbuf);
          if (!price || !admit(*price)) continue;
        }
        Result<Graph> cand = build_application(t, ix, m);
        if (!cand) continue;
        double c = candidate_cost(g, costs, total, constant, *cand, model, child_constant);
        // Admitted on its price: the exact cost decides (the same up to rounding).
        if (!(c < opts.alpha * res.best_cost)) continue;
        if (!rewrite_acyclic(ix, position, *cand, topo)) continue;  // it closed a cycle
        auto h = std::make_shared<const History>(
            History{Step{ti, k, t.name(), t.where(ix, m)}, cur.history});
        if (c < res.best_cost * (1 - kTieTolerance)) {
          res.best_cost = c;
          res.best = *cand;
          best_history = h;
        }
        finalists.offer(*cand, Key{c, order});
        ++res.kept;
        auto added =
            queue.emplace(Key{c, order++}, Entry{base, cand->diff_from(*base), std::move(h)});
        queued_nodes += added.first->second.patch.nodes.size();
        res.peak_queued_nodes = std::max(res.peak_queued_nodes, queued_nodes);
        if (queue.size() > opts.max_queue) {
          queued_nodes -= std::prev(queue.end())->second.patch.nodes.size();
          queue.erase(std::prev(queue.end()));
          ++res.dropped;
        }
        res.peak_queue = std::max(res.peak_queue, queue.size());
      }
    }
    reporter.progress("search", static_cast<double>(res.expanded), static_cast<double>(opts.budget),
                      fmt::format("best cost {:.1f} of {:.1f}", res.best_cost, res.initial_cost));
  }
  if (out_of_time) res.stopped_by = "time limit";
  res.steps = unwind(best_history);
  res.best_cost = model.graph_cost(res.best);  // exact, not the incremental estimate
  res.runners_up = finalists.runners_up(res.best, model);
  res.seconds = elapsed();
  res.cpu_seconds = process_cpu_seconds() - cpu_start;
  return res;
}

std::vector<Graph> replay_steps(const Graph& input, const std::vector<const Transform*>& transforms,
                                const std::vector<Step>& steps, size_t count) {
  std::vector<Graph> graphs;
  Graph cur = input;
  normalize(cur);  // as the search did before expanding it
  for (size_t i = 0; i < count && i < steps.size(); ++i) {
    const Step& s = steps[i];
    if (s.transform >= transforms.size())
      throw Error(fmt::format("replay: step {} names transform {} of {}", i + 1, s.transform,
                              transforms.size()));
    GraphIndex ix(cur);
    std::vector<Match> matches;
    const size_t n = transforms[s.transform]->find(ix, matches);
    std::optional<Graph> next;
    if (s.ordinal < n)
      if (Result<Graph> g = build_application(*transforms[s.transform], ix, matches[s.ordinal]))
        next = std::move(*g);
    if (!next)
      throw Error(
          fmt::format("replay: step {} ({} at {}) did not reproduce", i + 1, s.rule, s.where));
    normalize(*next);
    cur = *next;
    graphs.push_back(cur);
  }
  return graphs;
}

}  // namespace graphsub::opt
