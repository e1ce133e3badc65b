#include "gen/enumerate.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "gen/graph_eval.h"
#include "gen/parallel.h"
#include "gen/partitions.h"

namespace graphsub::gen {

namespace {

bool record_less(const GraphRecord& a, const GraphRecord& b) {
  return a.fp != b.fp ? a.fp < b.fp : a.g < b.g;
}

bool request_less(const SplitRequest& a, const SplitRequest& b) {
  return a.g != b.g ? a.g < b.g : a.blocks < b.blocks;
}

struct RoundOutput {
  std::vector<std::vector<GraphRecord>> records;  // per thread
  std::vector<std::vector<SplitRequest>> requests;
  EnumStats stats;
};

// One enumeration round over all first operators, `threads` workers pulling tasks.
RoundOutput run_round(const Space& s, int min_emit_ops, const FingerprintSet* pieces,
                      bool prefix_variables, int threads, Reporter& rep, const char* stage) {
  Enumerator planner(s);
  std::vector<RootTask> tasks = planner.root_tasks();
  RoundOutput out;
  out.records.resize(static_cast<size_t>(threads));
  out.requests.resize(static_cast<size_t>(threads));
  std::vector<std::unique_ptr<Enumerator>> workers;  // per-thread state
  for (int t = 0; t < threads; ++t)
    workers.push_back(std::make_unique<Enumerator>(s, min_emit_ops, pieces, prefix_variables));
  // Workers enumerate; this thread only reports progress (the reporter is not thread-safe).
  // An exception in a worker (out of memory, say) reaches the caller.
  parallel_for(
      tasks.size(), threads,
      [&](size_t i, size_t t) { workers[t]->run_task(tasks[i], out.records[t], out.requests[t]); },
      [&](size_t done) {
        rep.progress(stage, static_cast<double>(done), static_cast<double>(tasks.size()),
                     "first operators");
      });
  std::vector<EnumStats> stats;
  for (auto& w : workers) stats.push_back(w->stats());
  for (auto& st : stats) out.stats += st;
  return out;
}

// The pieces of split requests for the graphs of the first round, which had no piece set
// while they were enumerated.
void requests_of_small_graphs(const Space& s, const std::vector<GraphRecord>& records,
                              const FingerprintSet& pieces, std::vector<SplitRequest>& out) {
  GraphEvaluator ev(s);
  for (const GraphRecord& r : records) {
    if (r.g.num_ops == 0) continue;
    std::vector<TensorId> outs = graph_outputs(s, r.g);
    if (outs.size() < 2) continue;
    EvaluatedGraph e = ev.evaluate(r.g, false);
    for (const auto& part : output_partitions(outs.size())) {
      bool all_known = true;
      uint8_t blocks = *std::max_element(part.begin(), part.end());
      for (uint8_t b = 0; all_known && b <= blocks; ++b) {
        std::vector<uint64_t> h;
        for (size_t i = 0; i < part.size(); ++i)
          if (part[i] == b) h.push_back(e.output_hashes[i]);
        all_known = pieces.find(combine_output_hashes(h)) != nullptr;
      }
      if (!all_known) continue;
      SplitRequest q;
      q.g = r.g;
      std::copy(part.begin(), part.end(), q.blocks.begin());
      out.push_back(q);
    }
  }
}

template <class T>
std::vector<T> concat_all(std::vector<std::vector<T>>& parts) {
  size_t n = 0;
  for (auto& p : parts) n += p.size();
  std::vector<T> all;
  all.reserve(n);
  for (auto& p : parts) {
    all.insert(all.end(), p.begin(), p.end());
    std::vector<T>().swap(p);
  }
  return all;
}

}  // namespace

EnumerationResult enumerate_graphs(const Space& s, int threads, Reporter& rep) {
  threads = std::max(1, threads);
  EnumerationResult res;
  std::vector<GraphRecord> small;
  // Bare graphs: each pool tensor on its own.
  GraphEvaluator ev(s);
  for (size_t p = 0; p < s.num_pool(); ++p) {
    GraphRecord r;
    r.g.bare = static_cast<TensorId>(p);
    uint64_t h = ev.pool_hash(p);
    r.fp = combine_output_hashes(std::span<const uint64_t>(&h, 1));
    small.push_back(r);
  }
  if (s.max_ops > 1) {
    Space smaller = s;
    smaller.max_ops = s.max_ops - 1;
    RoundOutput r1 =
        run_round(smaller, 1, nullptr, false, threads, rep, "enumerate (smaller graphs)");
    res.stats += r1.stats;
    std::vector<GraphRecord> got = concat_all(r1.records);
    small.insert(small.end(), got.begin(), got.end());
  }
  FingerprintSet pieces;
  for (const GraphRecord& r : small)
    if (r.fp != 0 && !pieces.find(r.fp)) pieces.insert(r.fp, 1);
  requests_of_small_graphs(s, small, pieces, res.requests);

  RoundOutput r2 = run_round(s, s.max_ops, &pieces, s.max_ops > 1, threads, rep, "enumerate");
  res.stats += r2.stats;
  res.records = concat_all(r2.records);
  res.records.insert(res.records.end(), small.begin(), small.end());
  std::vector<GraphRecord>().swap(small);
  std::vector<SplitRequest> more = concat_all(r2.requests);
  res.requests.insert(res.requests.end(), more.begin(), more.end());

  rep.progress("sort", 0, 0, fmt::format("{} graphs", res.records.size()));
  std::sort(res.records.begin(), res.records.end(), record_less);
  std::sort(res.requests.begin(), res.requests.end(), request_less);
  return res;
}

std::vector<Bucket> buckets_of(const std::vector<GraphRecord>& records) {
  std::vector<Bucket> out;
  for (size_t i = 0; i < records.size();) {
    size_t j = i + 1;
    while (j < records.size() && records[j].fp == records[i].fp) ++j;
    out.push_back({i, j});
    i = j;
  }
  return out;
}

}  // namespace graphsub::gen
