// Differential test of the optimizer: random small graphs from the operator set, optimized
// with the shipped rules (rules/default.rules, rules/merges.rules and the structural
// transforms), must compute what the originals compute on the reference executor. The
// comparison here is independent of the optimizer's own check (which is off).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "exec/host_tensor.h"
#include "exec/reference_executor.h"
#include "ir/builder.h"
#include "opt/cost/analytic_cost.h"
#include "opt/search/optimize.h"
#include "support/shipped_library.h"

namespace graphsub::opt {
namespace {

// SplitMix64: the graphs depend on the seed alone.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }

 private:
  uint64_t s_;
};

// A random graph of image ops (NCHW, 6x6) and matrix ops ([4, K]): each step applies one
// operator to tensors made so far, so values are shared between operators (which the
// merging rules look for). Unused tensors become outputs.
Graph random_graph(uint64_t seed, int steps) {
  Rng r(seed);
  GraphBuilder b(true, seed);
  std::vector<TensorRef> images{b.input("img", {1, 4, 6, 6})};
  std::vector<TensorRef> mats{b.input("mat", {4, 8})};
  std::vector<bool> img_used{false}, mat_used{false};
  int w = 0;
  auto weight = [&](Shape s) { return b.weight("w" + std::to_string(w++), std::move(s)); };
  auto pick = [&](std::vector<TensorRef>& pool, std::vector<bool>& used) {
    size_t i = pool.size() - 1 - r.below(std::min<size_t>(pool.size(), 3));  // mostly recent
    used[i] = true;
    return pool[i];
  };
  auto same_shape = [&](std::vector<TensorRef>& pool, std::vector<bool>& used, TensorRef x) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < pool.size(); ++i)
      if (b.shape(pool[i]) == b.shape(x)) idx.push_back(i);
    size_t i = idx[r.below(idx.size())];
    used[i] = true;
    return pool[i];
  };
  const char* acts[] = {"none", "relu", "sigmoid", "tanh"};
  for (int s = 0; s < steps; ++s) {
    bool image = r.below(3) != 0;
    auto& pool = image ? images : mats;
    auto& used = image ? img_used : mat_used;
    TensorRef x = pick(pool, used);
    const Shape xs = b.shape(x);
    TensorRef y;
    switch (r.below(image ? 8 : 6)) {
      case 0:
        y = b.op(r.below(2) ? "relu" : (r.below(2) ? "sigmoid" : "tanh"), {x});
        break;
      case 1:
        y = b.ewadd(x, same_shape(pool, used, x));
        break;
      case 2:
        y = b.ewmul(x, same_shape(pool, used, x));
        break;
      case 3:
        y = b.concat(image ? 1 : 0, {x, same_shape(pool, used, x)});
        break;
      case 4:
        if (image) {
          int64_t k = r.below(2) ? 3 : 1;
          y = b.conv(x, weight({4, xs[1], k, k}),
                     {.stride = 1, .pad = k / 2, .act = acts[r.below(4)]});
        } else {
          y = b.matmul(x, weight({xs[1], 8}), acts[r.below(2)]);
        }
        break;
      case 5:
        if (image)
          y = b.batchnorm(x, "bn" + std::to_string(s));
        else
          y = b.softmax(x, 1);
        break;
      case 6:
        y = r.below(2) ? b.poolmax(x, {.kernel = 3, .stride = 1, .pad = 1})
                       : b.poolavg(x, {.kernel = 3, .stride = 1, .pad = 1});
        break;
      default:  // two convs of one input: what merge rules rewrite
        y = b.ewadd(b.conv(x, weight({4, xs[1], 1, 1})), b.conv(x, weight({4, xs[1], 1, 1})));
        break;
    }
    pool.push_back(y);
    used.push_back(false);
  }
  int outs = 0;
  for (size_t i = 0; i < images.size(); ++i)
    if (!img_used[i] && i > 0) b.output("out" + std::to_string(outs++), images[i]);
  for (size_t i = 0; i < mats.size(); ++i)
    if (!mat_used[i] && i > 0) b.output("out" + std::to_string(outs++), mats[i]);
  if (outs == 0) b.output("out0", images.back());
  return b.finish();
}

TEST(OptDifferential, RandomGraphsKeepTheirOutputs) {
  AnalyticCostModel cost({.cpu = "test",
                          .isa = "any",
                          .threads = 1,
                          .peak_gflops = 1000,
                          .bandwidth_gbs = 1000,
                          .op_overhead_us = 10});  // merging pays off: rules get applied
  size_t applied = 0, graphs = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    Graph g = random_graph(seed, 10);
    OptimizeOptions o;
    o.search.budget = 40;
    o.check = false;  // compared below, independently
    OptimizeResult r = optimize_graph(g, o, testutil::shipped_library(), cost, null_reporter());
    for (const auto& [rule, n] : r.rules_applied) applied += n;
    ++graphs;
    for (uint64_t feed = 1; feed <= 2; ++feed) {
      auto feeds = random_feeds(g, seed * 100 + feed);
      auto want = run_reference<float>(g, feeds);
      auto got = run_reference<float>(r.optimized, feeds);
      ASSERT_EQ(want.size(), got.size()) << "seed " << seed;
      for (size_t i = 0; i < want.size(); ++i) {
        Difference d = compare(got[i], want[i], {.rtol = 1e-3, .atol = 1e-4});
        EXPECT_TRUE(d.ok) << "seed " << seed << ", output " << i << ": max abs diff " << d.max_abs
                          << " (rules applied: " << r.rules_applied.size() << ")";
      }
    }
  }
  EXPECT_EQ(graphs, 12u);
  EXPECT_GT(applied, 0u);  // the test compares rewritten graphs, not copies
}

}  // namespace
}  // namespace graphsub::opt
