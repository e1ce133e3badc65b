#include "gen/prove/rank_batches.h"

#include <algorithm>

#include "gen/shard_files.h"

namespace graphsub::gen {

std::vector<BatchItem> gather_items(Cluster& cluster, std::vector<BatchItem> mine) {
  if (cluster.size() == 1) return mine;
  ByteWriter w;
  w.put<uint64_t>(mine.size());
  for (const BatchItem& it : mine) {
    w.put_string(it.key);
    w.put(it.status);
    w.put(it.vars);
  }
  std::vector<BatchItem> all;
  std::vector<std::string> got = cluster.all_gather(w.bytes());
  // Each rank's bytes freed once read (this rank's own at once: its items are moved over), so
  // the batch is not held as bytes and as items at once.
  std::string().swap(w.bytes());
  std::string().swap(got[static_cast<size_t>(cluster.rank())]);
  for (int r = 0; r < cluster.size(); ++r) {
    if (r == cluster.rank()) {
      for (BatchItem& it : mine) all.push_back(std::move(it));
      continue;
    }
    ByteReader in(got[static_cast<size_t>(r)], "a rank's batch");
    for (uint64_t n = in.get<uint64_t>(); n > 0; --n) {
      BatchItem it;
      it.key = in.get_string();
      it.status = in.get<uint8_t>();
      it.vars = in.get<int>();
      all.push_back(std::move(it));
    }
    std::string().swap(got[static_cast<size_t>(r)]);
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const BatchItem& a, const BatchItem& b) { return a.key < b.key; });
  return all;
}

std::vector<uint64_t> sum_over_ranks(Cluster& cluster, std::vector<uint64_t> mine) {
  if (cluster.size() == 1) return mine;
  ByteWriter w;
  w.put_vector(mine);
  std::vector<uint64_t> sum(mine.size(), 0);
  for (const std::string& bytes : cluster.all_gather(w.bytes())) {
    ByteReader in(bytes, "a rank's counts");
    std::vector<uint64_t> theirs = in.get_vector<uint64_t>();
    for (size_t i = 0; i < sum.size() && i < theirs.size(); ++i) sum[i] += theirs[i];
  }
  return sum;
}

std::set<int> union_over_ranks(Cluster& cluster, const std::set<int>& mine) {
  if (cluster.size() == 1) return mine;
  std::vector<int> v(mine.begin(), mine.end());
  ByteWriter w;
  w.put_vector(v);
  std::set<int> all;
  for (const std::string& bytes : cluster.all_gather(w.bytes())) {
    ByteReader in(bytes, "a rank's values");
    for (int x : in.get_vector<int>()) all.insert(x);
  }
  return all;
}

}  // namespace graphsub::gen
