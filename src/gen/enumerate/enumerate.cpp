#include "gen/enumerate/enumerate.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

#include "core/error.h"
#include "gen/enumerate/graph_eval.h"
#include "gen/enumerate/partitions.h"
#include "gen/enumerate/spill_forecast.h"
#include "gen/shard_files.h"
#include "ir/heap_release.h"
#include "ir/parallel.h"

namespace graphsub::gen {

namespace {

bool request_less(const SplitRequest& a, const SplitRequest& b) {
  return a.g != b.g ? a.g < b.g : a.blocks < b.blocks;
}

// Parts by the top bits of the fingerprint, so that the parts in order are the records in
// fingerprint order.
constexpr int kPartBits = 8;
constexpr size_t kParts = size_t{1} << kPartBits;
size_t part_of(uint64_t fp) {
  return static_cast<size_t>(fp >> (64 - kPartBits));
}
// The fingerprints of part p: [part_low(p), part_high(p)].
uint64_t part_low(size_t p) {
  return static_cast<uint64_t>(p) << (64 - kPartBits);
}
uint64_t part_high(size_t p) {
  return part_low(p) | (~uint64_t{0} >> kPartBits);
}
// The records of part p in a vector sorted by fingerprint.
template <class T>
std::pair<size_t, size_t> part_range(const std::vector<T>& v, size_t p) {
  auto first = [&](size_t q) -> size_t {
    if (q >= kParts) return v.size();
    return static_cast<size_t>(std::lower_bound(v.begin(), v.end(), part_low(q),
                                                [](const T& r, uint64_t f) { return r.fp < f; }) -
                               v.begin());
  };
  return {first(p), first(p + 1)};
}

std::string part_file(const std::string& dir, size_t p) {
  return fmt::format("{}/part-{:03}.bin", dir, p);
}

// One file per part, written by all threads in blocks under a lock per part: temporary ones
// (deleted when closed or when the process ends), or, for a shard kept in the run directory,
// the part files of folder `dir`. Packed is PackedGraph, or WidePackedGraph at N = 5.
template <class Packed>
class SpillFiles {
 public:
  explicit SpillFiles(const std::string& dir = "") : files_(kParts), locks_(kParts) {
    for (size_t p = 0; p < kParts; ++p) {
      files_[p] = dir.empty() ? std::tmpfile() : std::fopen(part_file(dir, p).c_str(), "w+b");
      if (!files_[p])
        throw Error(fmt::format("enumeration: cannot create {}: {}",
                                dir.empty() ? "a temporary file" : part_file(dir, p),
                                std::strerror(errno)));
    }
  }
  // Closes every file (the kept ones are then whole on disk).
  void close_all() {
    for (auto& f : files_) {
      if (f && std::fclose(f) != 0)
        throw Error(fmt::format("enumeration: cannot write a part file: {}", std::strerror(errno)));
      f = nullptr;
    }
  }
  ~SpillFiles() {
    for (auto f : files_)
      if (f) std::fclose(f);
  }
  SpillFiles(const SpillFiles&) = delete;
  SpillFiles& operator=(const SpillFiles&) = delete;

  void write(size_t p, const std::vector<Packed>& block) {
    std::lock_guard<std::mutex> lock(locks_[p]);
    if (std::fwrite(block.data(), sizeof(Packed), block.size(), files_[p]) != block.size())
      throw Error(fmt::format("enumeration: cannot write a temporary file ({} bytes so far): {}",
                              bytes_, std::strerror(errno)));
    bytes_ += block.size() * sizeof(Packed);
  }
  // Reads part p back whole and closes its file.
  std::vector<Packed> take(size_t p) {
    FILE* f = files_[p];
    if (std::fflush(f) != 0 || std::fseek(f, 0, SEEK_END) != 0)
      throw Error(
          fmt::format("enumeration: cannot read a temporary file: {}", std::strerror(errno)));
    long bytes = std::ftell(f);
    std::vector<Packed> out(static_cast<size_t>(bytes) / sizeof(Packed));
    std::rewind(f);
    if (std::fread(out.data(), sizeof(Packed), out.size(), f) != out.size())
      throw Error(
          fmt::format("enumeration: cannot read a temporary file: {}", std::strerror(errno)));
    std::fclose(f);
    files_[p] = nullptr;
    return out;
  }
  uint64_t bytes() const { return bytes_; }

 private:
  std::vector<FILE*> files_;
  std::vector<std::mutex> locks_;
  std::atomic<uint64_t> bytes_{0};
};

}  // namespace

// The largest graphs of an enumeration: packed in part files, terminal ones whole. The part
// files are this process's temporary ones, or those of every shard in the run directory.
struct LargeGraphs {
  virtual ~LargeGraphs() = default;
  // The records of part p (see gather_part).
  virtual std::vector<GraphRecord> take_part(size_t p, const SmallGraphs& small,
                                             bool keep_singletons) = 0;
  std::vector<std::string> shard_dirs;  // when not empty, the parts are read from these
  std::vector<GraphRecord> whole;       // sorted by (fp, graph)
};

namespace {

// `all` in (fp, graph) order: only the records whose fingerprint two or more share, unless
// `keep_singletons`.
std::vector<GraphRecord> gather_part_records(std::vector<GraphRecord> all, bool keep_singletons);

template <class Packed>
struct LargeGraphsOf : LargeGraphs {
  LargeGraphsOf(const Space& s, int num_ops) : packer(s, num_ops) {}
  GraphPacker packer;
  std::unique_ptr<SpillFiles<Packed>> files;  // this process's temporary part files

  std::vector<Packed> take(size_t p) {
    if (shard_dirs.empty()) return files->take(p);
    std::vector<Packed> all;
    for (const std::string& d : shard_dirs) {
      std::optional<std::string> bytes = read_file_if_any(part_file(d, p));
      if (!bytes) throw Error(fmt::format("enumeration: {} is missing", part_file(d, p)));
      if (bytes->size() % sizeof(Packed))
        throw Error(fmt::format("enumeration: {} is damaged", part_file(d, p)));
      if (bytes->empty()) continue;  // memcpy with an empty vector's null data is undefined
      size_t at = all.size();
      all.resize(at + bytes->size() / sizeof(Packed));
      std::memcpy(all.data() + at, bytes->data(), bytes->size());
    }
    return all;
  }

  // The spilled records of the part, sorted; of a fingerprint they hold alone, only those
  // that a graph in memory shares (or all, with keep_singletons), unpacked.
  std::vector<GraphRecord> take_part(size_t p, const SmallGraphs& small,
                                     bool keep_singletons) override {
    std::vector<Packed> packed = take(p);
    std::sort(packed.begin(), packed.end());
    std::vector<GraphRecord> in_memory = small.between(part_low(p), part_high(p));
    const std::pair<size_t, size_t> wr = part_range(whole, p);
    in_memory.insert(in_memory.end(), whole.begin() + static_cast<std::ptrdiff_t>(wr.first),
                     whole.begin() + static_cast<std::ptrdiff_t>(wr.second));
    std::sort(in_memory.begin(), in_memory.end(), record_less);
    auto held_in_memory = [&](uint64_t fp) {
      auto it = std::lower_bound(in_memory.begin(), in_memory.end(), fp,
                                 [](const GraphRecord& r, uint64_t f) { return r.fp < f; });
      return it != in_memory.end() && it->fp == fp;
    };
    std::vector<GraphRecord> all;
    for (size_t i = 0; i < packed.size();) {
      size_t j = i + 1;
      while (j < packed.size() && packed[j].fp == packed[i].fp) ++j;
      if (keep_singletons || j - i >= 2 || held_in_memory(packed[i].fp))
        for (size_t k = i; k < j; ++k)
          all.push_back(GraphRecord{packed[k].fp, packed[k].graph(packer)});
      i = j;
    }
    std::vector<Packed>().swap(packed);
    all.insert(all.end(), in_memory.begin(), in_memory.end());
    return gather_part_records(std::move(all), keep_singletons);
  }
};

// A worker's sink for the largest graphs: packed records go to the files in blocks; terminal
// graphs (few) and graphs the packing cannot hold stay in memory whole.
template <class Packed>
class SpillSink : public GraphSink {
 public:
  SpillSink(SpillFiles<Packed>& files, const GraphPacker& packer)
      : files_(files), packer_(packer), blocks_(kParts) {}
  void add(const GraphRecord& r) override {
    if (r.g.terminal || !packer_.fits_wide()) {
      whole.push_back(r);
      return;
    }
    size_t p = part_of(r.fp);
    std::vector<Packed>& b = blocks_[p];
    if (b.capacity() == 0) b.reserve(kBlock);
    b.push_back(Packed::of(packer_, r.fp, r.g));
    if (b.size() == kBlock) {
      files_.write(p, b);
      b.clear();
    }
  }
  void add_request(const SplitRequest& q) override { requests.push_back(q); }
  void flush() {
    for (size_t p = 0; p < kParts; ++p) {
      if (!blocks_[p].empty()) files_.write(p, blocks_[p]);
      std::vector<Packed>().swap(blocks_[p]);
    }
  }
  std::vector<GraphRecord> whole;
  std::vector<SplitRequest> requests;

 private:
  static constexpr size_t kBlock = 2048;  // 32 KiB a part and thread (48 wide)
  SpillFiles<Packed>& files_;
  const GraphPacker& packer_;
  std::vector<std::vector<Packed>> blocks_;
};

// One enumeration round over all first operators, `threads` workers pulling tasks, each with
// its own sink.
// `configure` sets up each worker's enumerator (its thread index given).
// With `shard`, only the root tasks of its rank (every ranks-th, from its rank on).
template <class Sink, class Configure>
EnumStats run_round(const Space& s, int min_emit_ops, const FingerprintSet* pieces,
                    bool prefix_variables, std::vector<std::unique_ptr<Sink>>& sinks, Reporter& rep,
                    const char* stage, Configure&& configure, const EnumShard* shard = nullptr,
                    const std::function<void(size_t done, size_t total)>& on_progress = {}) {
  Enumerator planner(s);
  std::vector<RootTask> tasks = planner.root_tasks();
  if (shard && shard->ranks > 1) {
    std::vector<RootTask> mine;
    for (size_t i = static_cast<size_t>(shard->rank); i < tasks.size();
         i += static_cast<size_t>(shard->ranks))
      mine.push_back(tasks[i]);
    tasks = std::move(mine);
  }
  if (shard && shard->sample_of > 0) {
    std::vector<RootTask> sampled;
    std::vector<size_t> kept;
    for (size_t i = 0; i < tasks.size(); ++i)
      if (i % static_cast<size_t>(shard->sample_of) < static_cast<size_t>(shard->sample)) {
        sampled.push_back(tasks[i]);
        kept.push_back(i);
      }
    // What fraction the sample is, for a projection: a share of an R-rank run holds every
    // R-th root task, so past R above the task count some shares hold none.
    rep.info(fmt::format(
        "  (--shards {}/{}, {}: root tasks {} of {}{})", shard->sample, shard->sample_of, stage,
        fmt::join(kept, ", "), tasks.size(),
        static_cast<size_t>(shard->sample_of) > tasks.size()
            ? fmt::format("; {} of the {} shares hold none",
                          static_cast<size_t>(shard->sample_of) - tasks.size(), shard->sample_of)
            : std::string()));
    tasks = std::move(sampled);
  }
  std::vector<std::unique_ptr<Enumerator>> workers;  // per-thread state
  for (size_t t = 0; t < sinks.size(); ++t) {
    workers.push_back(std::make_unique<Enumerator>(s, min_emit_ops, pieces, prefix_variables));
    configure(*workers.back(), t);
  }
  // Workers enumerate; this thread only reports progress (the reporter is not thread-safe).
  // An exception in a worker (out of memory, say) reaches the caller.
  parallel_for(
      tasks.size(), static_cast<int>(sinks.size()),
      [&](size_t i, size_t t) { workers[t]->run_task(tasks[i], *sinks[t]); },
      [&](size_t done) {
        uint64_t graphs = 0;
        for (auto& w : workers) graphs += w->stats().graphs;  // approximate while running
        rep.progress(stage, static_cast<double>(done), static_cast<double>(tasks.size()),
                     fmt::format("first operators, {:.1f} M graphs", graphs / 1e6));
        if (on_progress) on_progress(done, tasks.size());
      });
  EnumStats stats;
  for (auto& w : workers) stats += w->stats();
  return stats;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A worker's sink that keeps the split requests only.
class RequestSink : public VectorSink {
 public:
  void add(const GraphRecord&) override {}
};

// A worker's sink for the graphs of fewer than max_ops operators.
class SmallSink : public GraphSink {
 public:
  explicit SmallSink(const Space& s) : graphs(s) {}
  void add(const GraphRecord& r) override { graphs.add(r); }
  void add_request(const SplitRequest&) override {
    throw Error("enumeration: a split request among the smaller graphs");
  }
  SmallGraphs graphs;
};

// The split requests of the graphs of the first round of at most `max_ops_evaluated`
// operators, which had no piece set while they were enumerated: each graph with several
// outputs, each way its outputs split into blocks that are all pieces of at most max_ops
// operators together. Each graph is evaluated again, on `threads` threads; the caller sorts
// them.
void requests_of_small_graphs(const Space& s, const SmallGraphs& small,
                              const FingerprintSet& pieces, int threads, int max_ops_evaluated,
                              std::vector<SplitRequest>& out) {
  auto requests_of = [&](GraphEvaluator& ev, const CompactGraph& g,
                         std::vector<SplitRequest>& into) {
    if (g.num_ops == 0 || g.num_ops > max_ops_evaluated) return;
    std::vector<TensorId> outs = graph_outputs(s, g);
    if (outs.size() < 2) return;
    EvaluatedGraph e = ev.evaluate(g, false);
    for (const auto& part : output_partitions(outs.size())) {
      bool all_known = true;
      uint32_t piece_ops = 0;
      uint8_t blocks = *std::max_element(part.begin(), part.end());
      for (uint8_t b = 0; all_known && b <= blocks; ++b) {
        std::vector<uint64_t> h;
        for (size_t i = 0; i < part.size(); ++i)
          if (part[i] == b) h.push_back(e.output_hashes[i]);
        const uint32_t* ops = pieces.find(combine_output_hashes(h));
        all_known = ops != nullptr;
        if (ops) piece_ops += *ops;
      }
      // A partner of more than max_ops operators is never formed (split_partner).
      if (!all_known || piece_ops > static_cast<uint32_t>(s.max_ops)) continue;
      SplitRequest q;
      q.g = g;
      std::copy(part.begin(), part.end(), q.blocks.begin());
      into.push_back(q);
    }
  };
  // Work items: chunks of each packed array, then the whole graphs.
  constexpr size_t kChunk = size_t{1} << 16;
  struct Chunk {
    int ops;  // 0: the whole graphs
    size_t begin, end;
  };
  std::vector<Chunk> chunks;
  for (int k = 1; k <= std::min(small.packed_levels(), max_ops_evaluated); ++k)
    for (size_t b = 0; b < small.packed(k).size(); b += kChunk)
      chunks.push_back({k, b, std::min(small.packed(k).size(), b + kChunk)});
  chunks.push_back({0, 0, small.whole().size()});
  std::vector<std::vector<SplitRequest>> found(chunks.size());
  std::vector<std::unique_ptr<GraphEvaluator>> evs;
  for (int t = 0; t < threads; ++t) evs.push_back(std::make_unique<GraphEvaluator>(s));
  parallel_for(
      chunks.size(), threads,
      [&](size_t i, size_t t) {
        const Chunk& c = chunks[i];
        for (size_t j = c.begin; j < c.end; ++j)
          requests_of(
              *evs[t],
              c.ops ? small.packer(c.ops).unpack(small.packed(c.ops)[j].code) : small.whole()[j].g,
              found[i]);
      },
      [](size_t) {});
  for (auto& f : found) out.insert(out.end(), f.begin(), f.end());
}

// The parts' vectors joined, with room for `extra` more. The first part's vector is taken
// over, not copied (with one thread it is everything: at N = 4, 5.3 M small graphs, 212 MB).
template <class T, class Member>
std::vector<T> concat_all(std::vector<std::unique_ptr<Member>>& parts,
                          std::vector<T> Member::*field, size_t extra = 0) {
  size_t n = extra;
  for (auto& p : parts) n += ((*p).*field).size();
  std::vector<T> all;
  if (!parts.empty()) {
    all = std::move((*parts.front()).*field);
    std::vector<T>().swap((*parts.front()).*field);
  }
  all.reserve(n);
  for (size_t i = 1; i < parts.size(); ++i) {
    std::vector<T>& v = (*parts[i]).*field;
    all.insert(all.end(), v.begin(), v.end());
    std::vector<T>().swap(v);
  }
  return all;
}

std::vector<GraphRecord> gather_part_records(std::vector<GraphRecord> all, bool keep_singletons) {
  std::sort(all.begin(), all.end(), record_less);
  if (keep_singletons) return all;
  std::vector<GraphRecord> shared;
  for (size_t i = 0; i < all.size();) {
    size_t j = i + 1;
    while (j < all.size() && all[j].fp == all[i].fp) ++j;
    if (j - i >= 2)
      shared.insert(shared.end(), all.begin() + static_cast<std::ptrdiff_t>(i),
                    all.begin() + static_cast<std::ptrdiff_t>(j));
    i = j;
  }
  return shared;
}

// The floor every rank holds whole: the graphs, the representatives of values and the piece
// fingerprints of at most this many operators. Below N = 5 every smaller graph is within it.
// At N = 5 the floor's graphs of 4 operators are enumerated like N = 4's largest ones: in
// prefix form (in every renaming of their variables they are billions, and filled this
// 24 GB machine within 8 minutes) and reading only representatives (without that, the
// floor's own rules made up 229,000 of a measured fraction's library). So a rule between a
// graph of 5 and one of 4 operators is found where both read the same variables, and a split
// partner where its 4-operator piece is in prefix form. Their values have no representative
// kept (the graphs of 5 operators read them freely: the enumeration prunes less and loses no
// graph), and their fingerprints are found by binary search in their packed array rather
// than in a hash table (6 GB saved per rank).
constexpr int kHashedFloorOps = 3;

// A check word at the head of each kept shard file: a file of another program is refused,
// not misread.
constexpr uint64_t kShardMagic = 0x67737562656e756dULL;  // "gsubenum"

// The space of the floor's largest graphs past the hashed floor (at N = 5, those of 4
// operators): enumerated like the largest graphs of N = 4, in prefix form and reading only
// the representatives of values of up to 3 operators.
Space floor_top(const Space& s) {
  Space top = s;
  top.max_ops = s.max_ops - 1;
  return top;
}

// The split requests of the floor's graphs past the hashed floor (at N = 5, 340 M graphs of 4
// operators, whose requests are hundreds of millions): evaluating each graph again would take
// longer than enumerating them, so their enumeration is run again with the pieces, keeping
// only the requests, and over the share of root tasks of `shard` (a rank's, or a measurement's
// sample) like the largest graphs: no rank holds them all. Nothing below N = 5.
std::vector<SplitRequest> requests_past_hashed_floor(const Space& s, int threads, Reporter& rep,
                                                     const FingerprintSet& pieces,
                                                     const ValueReps& reps, const EnumShard& shard,
                                                     EnumStats& stats) {
  if (s.max_ops - 1 <= kHashedFloorOps) return {};
  const auto t0 = std::chrono::steady_clock::now();
  Space smaller = floor_top(s);
  std::vector<std::unique_ptr<VectorSink>> sinks;
  for (int t = 0; t < threads; ++t) sinks.push_back(std::make_unique<RequestSink>());
  stats.requests +=
      run_round(
          smaller, kHashedFloorOps + 1, &pieces, only_prefix_forms(s, smaller.max_ops), sinks, rep,
          "enumerate (split requests of the smaller graphs)",
          [&](Enumerator& e, size_t) {
            e.limit_partners(s.max_ops);
            if (s.minimal_reads) e.read_only_reps(&reps);
          },
          &shard)
          .requests;
  std::vector<SplitRequest> found = concat_all(sinks, &VectorSink::requests);
  rep.info(fmt::format("  (split requests of the graphs of {} operators: {} in {:.1f} s)",
                       smaller.max_ops, found.size(), seconds_since(t0)));
  return found;
}

// The largest graphs of this rank's root tasks, kept in the run directory: part files and
// shard.bin (the counts, the graphs kept whole and the split requests) in enum-RANK, written
// as enum-RANK.tmp and renamed when whole. A shard already there is not enumerated again.
template <class Packed>
void enumerate_kept_shard(const Space& s, int threads, Reporter& rep, const EnumShard& shard,
                          const FingerprintSet& pieces, const ValueReps& reps) {
  std::string dir = shard_path(shard.dir, "enum", shard.rank);
  if (path_exists(dir + "/shard.bin")) {
    rep.info(fmt::format("  (enumeration shard {} of {} found in {}, not run again)", shard.rank,
                         shard.ranks, dir));
    return;
  }
  std::string tmp = dir + ".tmp";
  remove_all(tmp);
  remove_all(dir);
  make_dirs(tmp);
  GraphPacker packer(s, s.max_ops);
  SpillFiles<Packed> files(tmp);
  std::vector<std::unique_ptr<SpillSink<Packed>>> sinks;
  for (int t = 0; t < threads; ++t)
    sinks.push_back(std::make_unique<SpillSink<Packed>>(files, packer));
  // Every rank writes its share to the run folder, which is shared (docs/distributed.md).
  SpillForecast forecast(tmp, static_cast<uint64_t>(shard.ranks));
  EnumStats stats = run_round(
      s, s.max_ops, &pieces, s.max_ops > 1, sinks, rep, "enumerate",
      [&](Enumerator& e, size_t) {
        if (s.minimal_reads) e.read_only_reps(&reps);
      },
      &shard, [&](size_t done, size_t total) { forecast.check(done, total, files.bytes(), rep); });
  for (auto& sink : sinks) sink->flush();
  files.close_all();
  std::vector<GraphRecord> whole = concat_all(sinks, &SpillSink<Packed>::whole);
  std::sort(whole.begin(), whole.end(), record_less);
  std::vector<SplitRequest> requests = concat_all(sinks, &SpillSink<Packed>::requests);
  std::vector<SplitRequest> floor =
      requests_past_hashed_floor(s, threads, rep, pieces, reps, shard, stats);
  requests.insert(requests.end(), floor.begin(), floor.end());
  std::sort(requests.begin(), requests.end(), request_less);
  ByteWriter w;
  w.put(kShardMagic);
  w.put(stats);
  w.put<uint64_t>(files.bytes());
  w.put_vector(whole);
  w.put_vector(requests);
  write_file_whole(tmp + "/shard.bin", w.bytes());
  rename_path(tmp, dir);
}

// The largest graphs, streamed to temporary part files.
template <class Packed>
std::shared_ptr<LargeGraphs> enumerate_largest(const Space& s, int threads, Reporter& rep,
                                               const FingerprintSet& pieces, const ValueReps& reps,
                                               const EnumShard& shard, EnumerationResult& res) {
  auto large = std::make_shared<LargeGraphsOf<Packed>>(s, s.max_ops);
  large->files = std::make_unique<SpillFiles<Packed>>();
  std::vector<std::unique_ptr<SpillSink<Packed>>> sinks;
  for (int t = 0; t < threads; ++t)
    sinks.push_back(std::make_unique<SpillSink<Packed>>(*large->files, large->packer));
  const auto t0 = std::chrono::steady_clock::now();
  SpillForecast forecast("", 1);  // std::tmpfile()'s folder, this process's alone
  const EnumStats largest = run_round(
      s, s.max_ops, &pieces, s.max_ops > 1, sinks, rep, "enumerate",
      [&](Enumerator& e, size_t) {
        if (s.minimal_reads) e.read_only_reps(&reps);
      },
      &shard,
      [&](size_t done, size_t total) { forecast.check(done, total, large->files->bytes(), rep); });
  res.stats += largest;
  for (auto& sink : sinks) sink->flush();
  res.spilled_bytes = large->files->bytes();
  rep.info(fmt::format("  (graphs of {} operators: {} in {:.1f} s)", s.max_ops, largest.graphs,
                       seconds_since(t0)));
  large->whole = concat_all(sinks, &SpillSink<Packed>::whole);
  std::sort(large->whole.begin(), large->whole.end(), record_less);
  std::vector<SplitRequest> more = concat_all(sinks, &SpillSink<Packed>::requests);
  res.requests.insert(res.requests.end(), more.begin(), more.end());
  more = requests_past_hashed_floor(s, threads, rep, pieces, reps, shard, res.stats);
  res.requests.insert(res.requests.end(), more.begin(), more.end());
  return large;
}

// Calls f with a null pointer of the record type the largest graphs are packed in: 16 bytes
// up to N = 4, 24 at N = 5.
template <class F>
auto with_packed_type(const Space& s, const EnumShard& shard, F&& f) {
  if (GraphPacker(s, s.max_ops).fits() && !shard.wide_records)
    return f(static_cast<PackedGraph*>(nullptr));
  return f(static_cast<WidePackedGraph*>(nullptr));
}

}  // namespace

bool only_prefix_forms(const Space& s, int ops) {
  return ops > 1 && (ops == s.max_ops || ops > kHashedFloorOps);
}

EnumerationResult enumerate_graphs(const Space& s, int threads, Reporter& rep,
                                   const EnumShard& shard) {
  threads = std::max(1, threads);
  const auto t0 = std::chrono::steady_clock::now();
  EnumerationResult res;
  res.small = SmallGraphs(s);
  SmallGraphs& small = res.small;
  // Bare graphs: each pool tensor on its own.
  GraphEvaluator ev(s);
  for (size_t p = 0; p < s.num_pool(); ++p) {
    GraphRecord r;
    r.g.bare = static_cast<TensorId>(p);
    uint64_t h = ev.pool_hash(p);
    r.fp = combine_output_hashes(std::span<const uint64_t>(&h, 1));
    small.add(r);
  }
  // With minimal_reads, the representative of every value the smaller graphs compute.
  ValueReps reps;
  if (s.max_ops > 1) {
    // The graphs of up to kHashedFloorOps operators, with the representatives of their values;
    // at N = 5 then those of 4 operators, reading representatives only (N = 4's enumeration).
    Space hashed = s;
    hashed.max_ops = std::min(s.max_ops - 1, kHashedFloorOps);
    std::vector<std::unique_ptr<SmallSink>> sinks;
    for (int t = 0; t < threads; ++t) sinks.push_back(std::make_unique<SmallSink>(s));
    std::vector<ValueReps> thread_reps(s.minimal_reads ? static_cast<size_t>(threads) : 0);
    res.stats += run_round(hashed, 1, nullptr, false, sinks, rep, "enumerate (smaller graphs)",
                           [&](Enumerator& e, size_t t) {
                             if (s.minimal_reads) e.collect_reps(&thread_reps[t]);
                           });
    // Each thread's table is freed once merged; the first is taken whole (no copy of it is
    // ever held beside it: at N = 4 a table is hundreds of MiB, on every rank).
    for (ValueReps& r : thread_reps) {
      if (reps.size() == 0)
        reps = std::move(r);
      else
        merge_reps(reps, r);
      r = ValueReps{};
    }
    if (s.max_ops - 1 > kHashedFloorOps)
      res.stats += run_round(floor_top(s), s.max_ops - 1, nullptr, true, sinks, rep,
                             "enumerate (smaller graphs)", [&](Enumerator& e, size_t) {
                               if (s.minimal_reads) e.read_only_reps(&reps);
                             });
    for (auto& sink : sinks) small.absorb(std::move(sink->graphs));
  }
  small.sort();
  // The operator count of the smallest graph of each fingerprint: hashed up to
  // kHashedFloorOps operators, searched in the sorted array past it.
  FingerprintSet pieces;
  auto add_piece = [&](uint64_t fp, uint32_t ops) {
    if (fp == 0) return;
    uint32_t* have = pieces.hashed.find(fp);
    if (!have)
      pieces.hashed.insert(fp, ops);
    else
      *have = std::min(*have, ops);
  };
  for (const GraphRecord& r : small.whole()) add_piece(r.fp, r.g.num_ops);
  for (int k = 1; k <= small.packed_levels(); ++k) {
    if (k > kHashedFloorOps) {
      pieces.sorted = &small.packed(k);
      pieces.sorted_ops = static_cast<uint32_t>(k);
      continue;
    }
    for (const PackedGraph& g : small.packed(k)) add_piece(g.fp, static_cast<uint32_t>(k));
  }
  requests_of_small_graphs(s, small, pieces, threads, kHashedFloorOps, res.requests);
  // What building the floor freed (the threads' representative tables merged into one, the
  // graph blocks joined, the fingerprint table's smaller sizes) goes back to the system:
  // a third of a rank's resident memory at N = 4 until then, held for the whole run.
  release_free_memory();
  rep.info(fmt::format("  (graphs of fewer than {} operators: {} in {:.1f} s, {} split requests)",
                       s.max_ops, small.size(), seconds_since(t0), res.requests.size()));
  if (!shard.dir.empty()) {
    res.large_ =
        with_packed_type(s, shard, [&]<class Packed>(Packed*) -> std::shared_ptr<LargeGraphs> {
          enumerate_kept_shard<Packed>(s, threads, rep, shard, pieces, reps);
          return std::make_shared<LargeGraphsOf<Packed>>(s, s.max_ops);
        });
    res.shard_ = shard;
    return res;
  }
  res.large_ = with_packed_type(s, shard, [&]<class Packed>(Packed*) {
    return enumerate_largest<Packed>(s, threads, rep, pieces, reps, shard, res);
  });
  std::sort(res.requests.begin(), res.requests.end(), request_less);
  return res;
}

void gather_shards(EnumerationResult& en) {
  const EnumShard& shard = en.shard_;
  if (shard.dir.empty()) return;
  LargeGraphs& large = *en.large_;
  for (int r = 0; r < shard.ranks; ++r) {
    std::string d = shard_path(shard.dir, "enum", r);
    std::string file = d + "/shard.bin";
    std::optional<std::string> bytes = read_file_if_any(file);
    if (!bytes)
      throw Error(fmt::format("enumeration: the shard of rank {} is missing ({})", r, file));
    ByteReader in(*bytes, file);
    if (in.get<uint64_t>() != kShardMagic)
      throw Error(fmt::format("enumeration: {} is not a shard of this program", file));
    en.stats += in.get<EnumStats>();
    en.spilled_bytes += in.get<uint64_t>();
    std::vector<GraphRecord> whole = in.get_vector<GraphRecord>();
    large.whole.insert(large.whole.end(), whole.begin(), whole.end());
    std::vector<SplitRequest> requests = in.get_vector<SplitRequest>();
    en.requests.insert(en.requests.end(), requests.begin(), requests.end());
    large.shard_dirs.push_back(d);
  }
  std::sort(large.whole.begin(), large.whole.end(), record_less);
  std::sort(en.requests.begin(), en.requests.end(), request_less);
}

size_t EnumerationResult::num_parts() const {
  return large_ ? kParts : 0;
}

std::vector<GraphRecord> EnumerationResult::take_part(size_t p, bool keep_singletons) {
  if (!large_ || p >= kParts) throw Error(fmt::format("enumeration: no part {}", p));
  return large_->take_part(p, small, keep_singletons);
}

std::vector<GraphRecord> take_all_records(EnumerationResult& en, bool keep_singletons) {
  std::vector<GraphRecord> all;
  for (size_t p = 0; p < en.num_parts(); ++p) {
    std::vector<GraphRecord> part = en.take_part(p, keep_singletons);
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
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
