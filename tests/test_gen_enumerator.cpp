// The generator's enumeration: every graph exactly once (checked against a brute-force search
// written from the specification), incremental fingerprints equal to evaluation from scratch,
// pruning rules, determinism across thread counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "core/error.h"
#include "gen/enumerate/enumerate.h"
#include "gen/enumerate/graph_eval.h"
#include "gen/enumerate/partitions.h"
#include "gen/enumerate/spill_forecast.h"
#include "test_gen_util.h"

namespace graphsub::gen {
namespace {

using testing::graph_text;
using testing::make_test_space;
using testing::matrix_pool;
using testing::small_domains;

// The value hash of operator output t of an evaluated graph (all_hashes lists them in order).
uint64_t hash_of(const Space& s, const CompactGraph& g, const EvaluatedGraph& e, TensorId t) {
  size_t p = s.num_pool(), idx = 0;
  for (int k = 0; k < producer_of(p, t); ++k)
    idx += static_cast<size_t>(s.variants[g.ops[k].variant].num_outputs);
  return e.all_hashes[idx + static_cast<size_t>(output_index_of(p, t))];
}

std::vector<GraphRecord> enumerate_all(const Space& s, int threads = 1) {
  EnumerationResult en = enumerate_graphs(s, threads, null_reporter());
  return take_all_records(en, true);
}

// Brute force: operators added in every order, each application evaluated from scratch; the
// same admission rules as the enumerator (values new, a value equal to a pool tensor only as
// an output, connected, outputs all computed or all pool tensors, not all from weights).
std::set<std::string> brute_force(const Space& s) {
  std::set<std::string> found;
  GraphEvaluator ev(s);
  size_t p = s.num_pool();
  std::function<void(CompactGraph&)> dfs = [&](CompactGraph& g) {
    // Tensors of g: pool + operator outputs, with value hashes and weight-only flags.
    EvaluatedGraph e = ev.evaluate(g, false);
    std::vector<TensorId> tensors;
    for (size_t i = 0; i < p; ++i) tensors.push_back(static_cast<TensorId>(i));
    for (int k = 0; k < g.num_ops; ++k)
      for (int o = 0; o < s.variants[g.ops[k].variant].num_outputs; ++o)
        tensors.push_back(op_output_id(p, k, o));
    std::set<uint64_t> pool_hashes;
    for (size_t i = 0; i < p; ++i) pool_hashes.insert(ev.pool_hash(i));
    auto terminal = [&](TensorId t) {
      return t >= p && pool_hashes.count(hash_of(s, g, e, t)) > 0;
    };
    if (g.num_ops == s.max_ops) return;
    for (uint16_t v = 0; v < s.variants.size(); ++v) {
      const GenOp& op = s.variants[v];
      // Every choice of distinct, non-terminal inputs (constants read none).
      std::vector<std::array<TensorId, kMaxArity>> ins;
      std::array<TensorId, kMaxArity> cur = kNoInputs;
      std::function<void(int)> choose = [&](int i) {
        if (i == op.arity) {
          ins.push_back(cur);
          return;
        }
        for (TensorId t : tensors) {
          if (terminal(t) || std::find(cur.begin(), cur.begin() + i, t) != cur.begin() + i)
            continue;
          cur[static_cast<size_t>(i)] = t;
          choose(i + 1);
        }
        cur[static_cast<size_t>(i)] = kNoTensor;
      };
      choose(0);
      for (auto in : ins) {
        CompactGraph h = g;
        h.ops[h.num_ops++] = GraphOp{v, in};
        EvaluatedGraph he = ev.evaluate(h, false);
        if (!he.ok) continue;
        // Values: operator outputs pairwise distinct.
        std::vector<uint64_t> hs = he.all_hashes;
        std::sort(hs.begin(), hs.end());
        if (std::adjacent_find(hs.begin(), hs.end()) != hs.end()) continue;
        // Canonical duplicates of the same set are fine: results are collected as a set.
        std::vector<TensorId> outs = graph_outputs(s, h);
        int terms = 0;
        for (TensorId t : outs) terms += pool_hashes.count(hash_of(s, h, he, t)) > 0;
        // Connected through operator edges.
        std::vector<int> comp(h.num_ops);
        for (int k = 0; k < h.num_ops; ++k) comp[k] = k;
        std::function<int(int)> find = [&](int x) {
          return comp[x] == x ? x : comp[x] = find(comp[x]);
        };
        for (int k = 0; k < h.num_ops; ++k)
          for (TensorId t : h.ops[k].in)
            if (t != kNoTensor && t >= p) comp[find(k)] = find(producer_of(p, t));
        int roots = 0;
        for (int k = 0; k < h.num_ops; ++k) roots += find(k) == k;
        // Weight-only outputs: every input leaf a weight (no data pool tensor reached).
        std::function<bool(TensorId)> weight_only = [&](TensorId t) -> bool {
          if (t < p) return s.pool[t].role != Role::Data;
          const GraphOp& o = h.ops[static_cast<size_t>(producer_of(p, t))];
          for (int i = 0; i < s.variants[o.variant].arity; ++i)
            if (!weight_only(o.in[static_cast<size_t>(i)])) return false;
          return true;
        };
        bool all_weights = true;
        for (TensorId t : outs) all_weights = all_weights && weight_only(t);
        // Graphs of max_ops operators (and at N = 5 of 4) use each class of pool tensors as a
        // prefix.
        bool prefix = true;
        if (only_prefix_forms(s, h.num_ops)) {
          std::set<TensorId> used;
          for (int k = 0; k < h.num_ops; ++k)
            for (TensorId t : h.ops[k].in)
              if (t != kNoTensor && t < p) used.insert(t);
          for (TensorId t : used)
            for (size_t q = 0; q < t; ++q)
              if (s.pool[q].shape == s.pool[t].shape && s.pool[q].role == s.pool[t].role &&
                  !used.count(static_cast<TensorId>(q)))
                prefix = false;
        }
        if (roots == 1 && (terms == 0 || terms == static_cast<int>(outs.size())) && !all_weights &&
            prefix)
          found.insert(graph_text(s, h));
        dfs(h);
      }
    }
  };
  CompactGraph empty;
  dfs(empty);
  return found;
}

void expect_every_graph_exactly_once(const Space& s, size_t at_least) {
  std::vector<GraphRecord> recs = enumerate_all(s);
  std::set<std::string> seen;
  for (auto& r : recs) {
    if (r.g.num_ops == 0) continue;
    EXPECT_TRUE(seen.insert(graph_text(s, r.g)).second) << "twice: " << graph_str(s, r.g);
  }
  std::set<std::string> expected = brute_force(s);
  EXPECT_EQ(seen.size(), expected.size());
  for (auto& g : expected) EXPECT_TRUE(seen.count(g)) << "missing: " << g;
  for (auto& g : seen) EXPECT_TRUE(expected.count(g)) << "unexpected: " << g;
  EXPECT_GT(seen.size(), at_least);
}

TEST(GenEnumerator, ProducesEveryGraphExactlyOnce) {
  expect_every_graph_exactly_once(
      make_test_space({"ewadd", "relu", "transpose", "matmul"}, matrix_pool(), 3), 100);
}

// At N = 5 the split requests of the floor's graphs of 4 operators come from a second
// enumeration, those of smaller graphs from evaluating each again: together they are every
// request that evaluating each smaller graph finds.
TEST(GenEnumerator, SplitRequestsOfTheFloorAtFiveOperatorsAreEveryOne) {
  Space s = make_test_space({"ewadd", "relu", "split", "concat"}, matrix_pool(), 5);
  EnumerationResult en = enumerate_graphs(s, 2, null_reporter());
  std::map<uint64_t, uint32_t> smallest;  // fingerprint -> fewest operators
  std::vector<GraphRecord> small = en.small.between(0, ~uint64_t{0});
  for (const GraphRecord& r : small)
    if (r.fp && (!smallest.count(r.fp) || smallest[r.fp] > r.g.num_ops))
      smallest[r.fp] = r.g.num_ops;
  std::set<std::pair<std::string, std::vector<uint8_t>>> expected, found;
  size_t of_four = 0;
  GraphEvaluator ev(s);
  for (const GraphRecord& r : small) {
    if (r.g.num_ops == 0 || graph_outputs(s, r.g).size() < 2) continue;
    EvaluatedGraph e = ev.evaluate(r.g, false);
    for (const auto& part : output_partitions(e.output_hashes.size())) {
      uint32_t ops = 0;
      bool known = true;
      for (uint8_t b = 0; b <= *std::max_element(part.begin(), part.end()); ++b) {
        std::vector<uint64_t> h;
        for (size_t i = 0; i < part.size(); ++i)
          if (part[i] == b) h.push_back(e.output_hashes[i]);
        auto it = smallest.find(combine_output_hashes(h));
        known = known && it != smallest.end();
        if (it != smallest.end()) ops += it->second;
      }
      if (known && ops <= 5 && expected.insert({graph_text(s, r.g), part}).second)
        of_four += r.g.num_ops == 4;
    }
  }
  for (const SplitRequest& q : en.requests)
    if (q.g.num_ops < 5) {
      size_t n = graph_outputs(s, q.g).size();
      found.insert(
          {graph_text(s, q.g), std::vector<uint8_t>(q.blocks.begin(), q.blocks.begin() + n)});
    }
  EXPECT_GT(of_four, 10u);
  EXPECT_EQ(found, expected);
}

// Measurement runs (generate --shards K/R) enumerate the largest graphs of their root tasks
// only, and every smaller graph whole.
TEST(GenEnumerator, SampledSharesHoldTheirRootTasksOnly) {
  Space s = make_test_space({"ewadd", "relu", "transpose", "matmul"}, matrix_pool(), 3);
  auto largest = [&](int k, int r) {
    EnumShard shard;
    shard.sample = k;
    shard.sample_of = r;
    EnumerationResult en = enumerate_graphs(s, 2, null_reporter(), shard);
    std::set<std::string> out, small;
    for (auto& g : take_all_records(en, true))
      (g.g.num_ops == 3 ? out : small).insert(graph_text(s, g.g));
    return std::pair{out, small};
  };
  auto [all, all_small] = largest(0, 0);
  auto [one, one_small] = largest(1, 3);
  auto [two, two_small] = largest(2, 3);
  auto [three, three_small] = largest(3, 3);
  EXPECT_EQ(three, all);
  EXPECT_GT(one.size(), 0u);
  EXPECT_LT(one.size(), two.size());
  EXPECT_LT(two.size(), all.size());
  for (auto& g : one) EXPECT_TRUE(two.count(g)) << g;
  for (auto& g : two) EXPECT_TRUE(all.count(g)) << g;
  EXPECT_EQ(one_small, all_small);
  EXPECT_EQ(two_small, all_small);
  // The run says which root tasks the sample holds, and when shares hold none.
  struct Lines : Reporter {
    std::vector<std::string> lines;
    void info(std::string_view l) override { lines.emplace_back(l); }
  };
  Lines said;
  EnumShard wide;
  wide.sample = 2;
  wide.sample_of = 100000;
  enumerate_graphs(s, 2, said, wide);
  std::string tasks;
  for (auto& l : said.lines)
    if (l.find("--shards 2/100000, enumerate:") != std::string::npos) tasks = l;
  EXPECT_NE(tasks.find("root tasks 0, 1 of "), std::string::npos) << tasks;
  EXPECT_NE(tasks.find("of the 100000 shares hold none"), std::string::npos) << tasks;
}

// Operators with two outputs (the enumerator skips second operands by producer) and binary
// operators whose operand order matters.
TEST(GenEnumerator, ProducesEveryGraphExactlyOnceWithSplitsAndConcats) {
  expect_every_graph_exactly_once(
      make_test_space({"concat", "split", "ewmul", "relu"}, matrix_pool(), 3), 100);
}

// A space with an operator of three tensor inputs (attention's q, k and v) beside unary and
// binary ones: three pool tensors of one shape, so every input order is a different graph.
Space three_input_space(int max_ops) {
  ParamDomains d = small_domains();
  d["scale"] = {std::string("1")};
  return make_test_space(
      {"attention", "ewadd", "transpose"},
      {{"x1", {2, 4}, Role::Data}, {"x2", {2, 4}, Role::Data}, {"x3", {2, 4}, Role::Data}}, max_ops,
      d);
}

TEST(GenEnumerator, ProducesEveryGraphExactlyOnceWithThreeInputOperators) {
  Space s = three_input_space(3);
  ASSERT_EQ(s.max_arity(), 3);
  expect_every_graph_exactly_once(s, 100);
}

// Graphs of five operators: the floor's graphs of four operators are found as pieces by binary
// search.
TEST(GenEnumerator, ProducesEveryGraphExactlyOnceAtFiveOperators) {
  expect_every_graph_exactly_once(make_test_space({"ewadd", "relu"}, matrix_pool(), 5), 1000);
}

// The largest graphs of five operators are packed in 128 bits where 64 do not hold them; the
// records read back are those of the 64-bit packing.
TEST(GenEnumerator, WideRecordsReadBackLikeNarrowOnes) {
  Space s = make_test_space({"ewadd", "ewmul", "matmul", "relu", "transpose"}, matrix_pool(), 3);
  ASSERT_TRUE(GraphPacker(s, 3).fits());
  EnumShard wide;
  wide.wide_records = true;
  for (bool singletons : {true, false}) {
    EnumerationResult a = enumerate_graphs(s, 2, null_reporter());
    EnumerationResult b = enumerate_graphs(s, 2, null_reporter(), wide);
    std::vector<GraphRecord> ra = take_all_records(a, singletons),
                             rb = take_all_records(b, singletons);
    ASSERT_GT(ra.size(), 100u);
    ASSERT_EQ(ra.size(), rb.size());
    for (size_t i = 0; i < ra.size(); ++i) {
      EXPECT_EQ(ra[i].fp, rb[i].fp);
      EXPECT_TRUE(ra[i].g == rb[i].g) << graph_str(s, ra[i].g);
    }
    EXPECT_EQ(b.spilled_bytes * 2, a.spilled_bytes * 3);  // 24 bytes a graph against 16
  }
}

// Every graph the enumerator emits (the bare ones left out), each checked: it evaluates from
// scratch and its fingerprint is the one its outputs give.
std::vector<CompactGraph> graphs_with_checked_fingerprints(const Space& s) {
  GraphEvaluator ev(s);
  std::vector<CompactGraph> out;
  for (auto& r : enumerate_all(s)) {
    if (r.g.num_ops == 0) continue;
    EvaluatedGraph e = ev.evaluate(r.g, false);
    EXPECT_TRUE(e.ok) << graph_str(s, r.g);
    EXPECT_EQ(r.fp, combine_output_hashes(e.output_hashes)) << graph_str(s, r.g);
    out.push_back(r.g);
  }
  return out;
}

// Fingerprints, float values through the memo (which keeps no three-input term) and packed
// codes are what they are for binary operators.
TEST(GenEnumerator, ThreeInputGraphsEvaluatePackAndCompareLikeOthers) {
  Space s = three_input_space(3);
  GraphEvaluator scratch(s, true, 0), memo(s, true);
  GraphPacker packer(s, 3);
  ASSERT_TRUE(packer.fits());
  std::vector<CompactGraph> largest;
  size_t ternary = 0;
  for (const CompactGraph& g : graphs_with_checked_fingerprints(s)) {
    EvaluatedGraph want = scratch.evaluate(g, true, false);
    EXPECT_EQ(memo.evaluate(g, true, false).output_f32, want.output_f32) << graph_str(s, g);
    for (int k = 0; k < g.num_ops; ++k) ternary += s.variants[g.ops[k].variant].arity == 3;
    if (g.num_ops == 3 && !g.terminal) largest.push_back(g);
  }
  EXPECT_GT(ternary, 100u);
  ASSERT_GT(largest.size(), 100u);
  for (size_t i = 0; i < largest.size(); ++i) {
    EXPECT_TRUE(packer.unpack(packer.pack(largest[i])) == largest[i]) << graph_str(s, largest[i]);
    const CompactGraph& other = largest[(i * 7919 + 13) % largest.size()];
    EXPECT_EQ(largest[i] < other, packer.pack(largest[i]) < packer.pack(other));
  }
}

TEST(GenEnumerator, IncrementalFingerprintsMatchEvaluationFromScratch) {
  Space s = make_test_space(
      {"ewmul", "smul", "concat", "split", "relu", "transpose"},
      {{"x1", {2, 4}, Role::Data}, {"x2", {2, 4}, Role::Data}, {"s1", {}, Role::Scalar}}, 3);
  GraphEvaluator ev(s);
  size_t checked = 0;
  for (auto& r : enumerate_all(s)) {
    EvaluatedGraph e = ev.evaluate(r.g, false);
    ASSERT_TRUE(e.ok) << graph_str(s, r.g);
    EXPECT_EQ(r.fp, combine_output_hashes(e.output_hashes)) << graph_str(s, r.g);
    ++checked;
  }
  EXPECT_GT(checked, 50u);
}

// The re-test's float values come from a memo of subterms; they must be the values computed
// from scratch, on a hit, on a miss, and when the memo keeps starting over.
TEST(GenEnumerator, FloatValuesFromTheMemoEqualThoseComputedFromScratch) {
  Space s = make_test_space({"ewmul", "smul", "concat", "split", "relu", "transpose", "matmul"},
                            {{"x1", {2, 4}, Role::Data},
                             {"x2", {2, 4}, Role::Data},
                             {"w1", {4, 4}, Role::Weight},
                             {"s1", {}, Role::Scalar}},
                            3);
  // scratch's memo holds nothing: it computes every operator.
  GraphEvaluator scratch(s, true, 0), memo(s, true), tiny(s, true, 5);
  size_t checked = 0, applied = 0;
  for (auto& r : enumerate_all(s)) {
    if (r.g.num_ops == 0) continue;
    // Not ok where the graph does not apply on the re-test pool's sizes.
    EvaluatedGraph want = scratch.evaluate(r.g, true, false);
    EXPECT_EQ(scratch.float_memo().size(), 0u);
    if (want.ok) {
      // Both kinds of value at once: the exact hashes and the same floats.
      EvaluatedGraph both = memo.evaluate(r.g, true, true);
      EXPECT_EQ(both.output_hashes, scratch.evaluate(r.g, false).output_hashes);
      EXPECT_EQ(both.output_f32, want.output_f32) << graph_str(s, r.g);
      ++applied;
    }
    for (int round = 0; round < 2; ++round) {  // the second round finds every subterm
      for (GraphEvaluator* ev : {&memo, &tiny}) {
        EvaluatedGraph got = ev->evaluate(r.g, true, false);
        ASSERT_EQ(got.ok, want.ok) << graph_str(s, r.g);
        EXPECT_EQ(got.outputs, want.outputs) << graph_str(s, r.g);
        EXPECT_EQ(got.output_f32, want.output_f32) << graph_str(s, r.g);
        EXPECT_EQ(got.all_hashes.size(), want.all_hashes.size()) << graph_str(s, r.g);
      }
      EXPECT_LE(tiny.float_memo().size(), 5u);
    }
    ++checked;
  }
  EXPECT_GT(checked, 1000u);
  EXPECT_GT(applied, 1000u);
  EXPECT_GT(memo.float_memo().size(), 100u);
}

TEST(GenEnumerator, CombinationOfOutputHashesIgnoresOrder) {
  std::vector<uint64_t> a{1, 99, 7}, b{7, 1, 99};
  EXPECT_EQ(combine_output_hashes(a), combine_output_hashes(b));
  std::vector<uint64_t> c{1, 99};
  EXPECT_NE(combine_output_hashes(a), combine_output_hashes(c));
}

TEST(GenEnumerator, ValuesEqualToPoolTensorsAreOutputsOnly) {
  Space s = make_test_space({"transpose", "relu"}, matrix_pool(), 3);
  bool found_tt = false;
  size_t p = s.num_pool();
  GraphEvaluator ev(s);
  for (auto& r : enumerate_all(s)) {
    std::string txt = graph_text(s, r.g);
    if (r.g.num_ops == 2 && txt.find("(transpose (transpose x1)") != std::string::npos) {
      found_tt = true;
      EXPECT_TRUE(r.g.terminal);
      // Same bucket as the bare x1.
      EXPECT_EQ(r.fp, combine_output_hashes(std::vector<uint64_t>{ev.pool_hash(0)}));
    }
    // Nothing reads transpose(transpose(x)).
    for (int k = 0; k < r.g.num_ops; ++k)
      for (TensorId t : r.g.ops[k].in)
        if (t != kNoTensor && t >= p) {
          EvaluatedGraph e = ev.evaluate(r.g, false);
          uint64_t h = hash_of(s, r.g, e, t);
          for (size_t i = 0; i < p; ++i) EXPECT_NE(h, ev.pool_hash(i)) << graph_str(s, r.g);
        }
  }
  EXPECT_TRUE(found_tt);
}

bool weight_only(const Space& s, const CompactGraph& g, TensorId t) {
  size_t p = s.num_pool();
  if (is_pool_id(p, t)) return s.pool[t].role != Role::Data;
  const GraphOp& o = g.ops[static_cast<size_t>(producer_of(p, t))];
  for (int i = 0; i < s.variants[o.variant].arity; ++i)
    if (!weight_only(s, g, o.in[static_cast<size_t>(i)])) return false;
  return true;
}

TEST(GenEnumerator, RespectsOperandRoles) {
  ParamDomains d = testing::small_domains();
  std::vector<PoolTensor> pool{{"i1", {2, 2, 5, 5}, Role::Data},
                               {"k1", {2, 2, 3, 3}, Role::Weight},
                               {"e1", {2, 2, 1, 3}, Role::Weight}};
  Space s = make_test_space({"conv", "enlarge", "relu", "poolmax"}, pool, 2, d);
  size_t p = s.num_pool();
  size_t convs = 0;
  for (auto& r : enumerate_all(s)) {
    for (int k = 0; k < r.g.num_ops; ++k) {
      const GenOp& op = s.variants[r.g.ops[k].variant];
      TensorId in0 = r.g.ops[k].in[0];
      if (op.name == "conv") {
        ++convs;
        // The data operand is never a kernel; the kernel operand never comes from data.
        EXPECT_FALSE(weight_only(s, r.g, in0)) << graph_str(s, r.g);
        EXPECT_TRUE(weight_only(s, r.g, r.g.ops[k].in[1])) << graph_str(s, r.g);
      }
      if (op.name == "enlarge") {
        EXPECT_TRUE(is_pool_id(p, in0));
      }
      if (op.name == "poolmax" && is_pool_id(p, in0)) {
        EXPECT_EQ(s.pool[in0].role, Role::Data);
      }
    }
  }
  EXPECT_GT(convs, 0u);
}

TEST(GenEnumerator, SameResultOnAnyNumberOfThreads) {
  Space s = make_test_space({"ewadd", "matmul", "relu", "concat", "split"}, matrix_pool(), 3);
  std::vector<GraphRecord> one = enumerate_all(s, 1), two = enumerate_all(s, 3);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].fp, two[i].fp);
    EXPECT_TRUE(one[i].g == two[i].g);
  }
}

// With minimal_reads, the largest graphs read only representatives, and a graph with several
// outputs has no partial output that is not one. relu(transpose(x)) and transpose(relu(x)) are
// one value of two operators: tanh reads one of them, not both, and only that one is a
// partial output beside another; transpose(relu(transpose(x))) = relu(x) has a smaller
// computation and is never read. Smaller graphs are all kept (the pieces rules are formed from).
TEST(GenEnumerator, MinimalReadsReadOneRepresentativePerValue) {
  auto largest = [](int max_ops, bool minimal_reads) {
    Space s = make_test_space({"relu", "tanh", "transpose"}, {{"x1", {2, 4}, Role::Data}}, max_ops);
    s.minimal_reads = minimal_reads;
    std::set<std::string> out;
    for (const GraphRecord& r : enumerate_all(s))
      if (r.g.num_ops == s.max_ops) out.insert(graph_text(s, r.g));
    return out;
  };
  auto has_read = [](const std::set<std::string>& graphs, const std::string& value) {
    return std::any_of(graphs.begin(), graphs.end(), [&](const std::string& g) {
      return g.find("(tanh " + value + ")#0") != std::string::npos;
    });
  };
  const std::string t = "(transpose x1)#0", relu_t = "(relu " + t + ")#0",
                    t_relu = "(transpose (relu x1)#0)#0";
  std::set<std::string> a3 = largest(3, false), m3 = largest(3, true);
  EXPECT_TRUE(has_read(a3, relu_t));
  EXPECT_TRUE(has_read(a3, t_relu));
  const bool reads_relu_t = has_read(m3, relu_t);
  EXPECT_NE(reads_relu_t, has_read(m3, t_relu));  // exactly one of them
  // {transpose(x), relu(transpose(x)), tanh(transpose(x))}: relu_t is a partial output there.
  const std::string partial = relu_t + " (tanh " + t + ")#0 " + t + " ";
  EXPECT_TRUE(a3.count(partial));
  EXPECT_EQ(m3.count(partial) == 1, reads_relu_t);
  for (const std::string& g : m3) EXPECT_TRUE(a3.count(g)) << g;
  EXPECT_LT(m3.size(), a3.size());

  const std::string t_relu_t = "(transpose " + relu_t + ")#0";  // = relu(x1)
  EXPECT_TRUE(has_read(largest(4, false), t_relu_t));
  EXPECT_FALSE(has_read(largest(4, true), t_relu_t));
}

TEST(GenEnumerator, PackedGraphsRoundTripAndCompareLikeTheGraphs) {
  Space s = make_test_space({"ewadd", "matmul", "relu", "concat", "split"}, matrix_pool(), 3);
  GraphPacker packer(s, 3);
  ASSERT_TRUE(packer.fits());
  std::vector<CompactGraph> graphs;
  for (auto& r : enumerate_all(s))
    if (r.g.num_ops == 3 && !r.g.terminal) graphs.push_back(r.g);
  ASSERT_GT(graphs.size(), 100u);
  for (size_t i = 0; i < graphs.size(); ++i) {
    EXPECT_TRUE(packer.unpack(packer.pack(graphs[i])) == graphs[i]) << graph_str(s, graphs[i]);
    const CompactGraph& other = graphs[(i * 7919 + 13) % graphs.size()];
    EXPECT_EQ(graphs[i] < other, packer.pack(graphs[i]) < packer.pack(other))
        << graph_str(s, graphs[i]) << " vs " << graph_str(s, other);
    // The 128-bit records of the graphs of 5 operators, the same way.
    WidePackedGraph w = WidePackedGraph::of(packer, 7, graphs[i]);
    EXPECT_TRUE(w.graph(packer) == graphs[i]) << graph_str(s, graphs[i]);
    EXPECT_EQ(graphs[i] < other, w < WidePackedGraph::of(packer, 7, other));
  }
  // Graphs of another size, and spaces too large for 64 bits, are refused.
  CompactGraph two = graphs[0];
  two.num_ops = 2;
  EXPECT_THROW(packer.pack(two), Error);
  Space wide = s;  // 40 variants (6 bits) and 30 pool tensors (6 bits): 4 x 18 bits
  wide.variants.resize(40, s.variants[0]);
  wide.pool.resize(30, s.pool[0]);
  EXPECT_FALSE(GraphPacker(wide, 4).fits());
  EXPECT_TRUE(GraphPacker(wide, 3).fits());
  EXPECT_THROW(GraphPacker(wide, 4).pack(graphs[0]), Error);
  EXPECT_TRUE(GraphPacker(wide, 5).fits_wide());
}

TEST(GenEnumerator, PieceFingerprintsAreFoundHashedOrSorted) {
  FingerprintSet pieces;
  pieces.hashed.insert(5, 2);
  pieces.hashed.insert(9, 4);  // a whole (terminal) graph of 4 operators
  std::vector<PackedGraph> four{{3, 0}, {5, 1}, {8, 0}, {8, 2}};
  pieces.sorted = &four;
  pieces.sorted_ops = 4;
  auto ops = [&](uint64_t fp) -> int {
    const uint32_t* o = pieces.find(fp);
    return o ? static_cast<int>(*o) : -1;
  };
  EXPECT_EQ(ops(5), 2);  // the smaller piece of the table wins
  EXPECT_EQ(ops(3), 4);
  EXPECT_EQ(ops(8), 4);
  EXPECT_EQ(ops(9), 4);
  EXPECT_EQ(ops(4), -1);
  EXPECT_EQ(ops(100), -1);
}

TEST(GenEnumerator, PartsHoldExactlyTheSharedFingerprintsInOrder) {
  Space s = make_test_space({"ewadd", "ewmul", "matmul", "relu", "transpose"}, matrix_pool(), 3);
  std::vector<GraphRecord> all = enumerate_all(s, 2);
  EnumerationResult en = enumerate_graphs(s, 2, null_reporter());
  EXPECT_EQ(en.num_parts(), 256u);
  std::vector<GraphRecord> shared;
  for (size_t p = 0; p < en.num_parts(); ++p) {
    std::vector<GraphRecord> part = en.take_part(p);
    for (auto& r : part) EXPECT_EQ(r.fp >> 56, p);
    shared.insert(shared.end(), part.begin(), part.end());
  }
  std::vector<GraphRecord> expected;
  for (size_t i = 0; i < all.size();) {
    size_t j = i + 1;
    while (j < all.size() && all[j].fp == all[i].fp) ++j;
    if (j - i >= 2) expected.insert(expected.end(), all.begin() + i, all.begin() + j);
    i = j;
  }
  ASSERT_GT(expected.size(), 50u);
  ASSERT_LT(expected.size(), all.size());
  ASSERT_EQ(shared.size(), expected.size());
  for (size_t i = 0; i < shared.size(); ++i) {
    EXPECT_EQ(shared[i].fp, expected[i].fp);
    EXPECT_TRUE(shared[i].g == expected[i].g) << graph_str(s, shared[i].g);
  }
  // Bare graphs and smaller graphs are among the pieces, sorted.
  std::vector<GraphRecord> small = en.small.between(0, ~uint64_t{0});
  EXPECT_TRUE(std::is_sorted(small.begin(), small.end(), record_less));
  EXPECT_EQ(small.size(), en.small.size());
  for (auto& r : small) EXPECT_LT(r.g.num_ops, 3);
  for (int ops = 1; ops < 3; ++ops)
    EXPECT_TRUE(std::is_sorted(en.small.packed(ops).begin(), en.small.packed(ops).end()));
  // The smallest graph of a fingerprint is the first of its records.
  for (size_t i = 0; i < small.size(); ++i)
    if (i == 0 || small[i].fp != small[i - 1].fp) {
      std::optional<CompactGraph> first = en.small.smallest_with(small[i].fp);
      ASSERT_TRUE(first.has_value());
      EXPECT_TRUE(*first == small[i].g) << graph_str(s, small[i].g);
    }
}

TEST(GenEnumerator, TwoOrdersOfAnOperandAreOneGraphForCommutativeOperators) {
  Space s = make_test_space({"ewadd", "matmul"}, matrix_pool(), 1);
  int ewadd = -1, matmul = -1;
  for (size_t v = 0; v < s.variants.size(); ++v) {
    if (s.variants[v].name == "ewadd") ewadd = static_cast<int>(v);
    if (s.variants[v].name == "matmul" && std::get<std::string>(s.variants[v].params[0]) == "none")
      matmul = static_cast<int>(v);
  }
  ASSERT_GE(ewadd, 0);
  ASSERT_GE(matmul, 0);
  EXPECT_TRUE(s.variants[static_cast<size_t>(ewadd)].commutative);
  EXPECT_FALSE(s.variants[static_cast<size_t>(matmul)].commutative);
}

// ONNX Runtime's skip normalizations read three tensors; their variants expose the norm alone
// (their kernels also write the sum, to scratch). The space tests them for aliases over
// triples of pool tensors, and the evaluator refuses an application with fewer inputs than
// the kernel reads.
TEST(GenEnumerator, SkipNormalizationsReadThreeTensorsAndExposeTheNorm) {
  ParamDomains d = small_domains();
  d["eps"] = {std::string("1e-05")};
  Space s = make_test_space(
      {"ewadd", "ort_skip_layernorm", "ort_skip_simplified_layernorm"},
      {{"x1", {2, 4}, Role::Data}, {"x2", {2, 4}, Role::Data}, {"g1", {4}, Role::Weight}}, 2, d);
  EXPECT_TRUE(s.aliases.empty());
  int skip_variant = -1;
  for (size_t v = 0; v < s.variants.size(); ++v)
    if (s.variants[v].name.starts_with("ort_skip")) {
      EXPECT_EQ(s.variants[v].arity, 3);
      EXPECT_EQ(s.variants[v].num_outputs, 1);
      if (skip_variant < 0) skip_variant = static_cast<int>(v);
    }
  ASSERT_GE(skip_variant, 0);
  size_t with_skip = 0;
  for (const CompactGraph& g : graphs_with_checked_fingerprints(s))
    for (int k = 0; k < g.num_ops; ++k) with_skip += s.variants[g.ops[k].variant].arity == 3;
  EXPECT_GT(with_skip, 10u);
  GraphEvaluator ev(s);
  Evaluator& x = ev.evaluator();
  TensorType m;
  m.shape = {2, 4};
  TypeId t = x.types().intern(m);
  const TypeId two[2] = {t, t};
  EXPECT_FALSE(x.apply(static_cast<uint32_t>(skip_variant), two).ok);
}

// An operator of four tensor inputs (SkipLayerNormalization with beta, a longer form of the
// language) beside binary ones: every graph exactly once, against the brute force.
TEST(GenEnumerator, ProducesEveryGraphExactlyOnceWithFourInputOperators) {
  ParamDomains d = small_domains();
  d["eps"] = {std::string("1e-05")};
  Space s = make_test_space({"ewadd", "ort_skip_layernorm_b"},
                            {{"x1", {2, 4}, Role::Data},
                             {"x2", {2, 4}, Role::Data},
                             {"g1", {4}, Role::Weight},
                             {"b1", {4}, Role::Weight}},
                            2, d);
  ASSERT_EQ(s.max_arity(), 4);
  expect_every_graph_exactly_once(s, 20);
}

// At sizes where an operator's outputs do not depend on one of its inputs, it is not applied:
// attention over a single key returns its value whatever the queries, softmax over an axis of
// one element is all ones. Every graph through such an application equals every other with
// another tensor in that input, and at N = 3 over every operator those pairs outgrew 24 GB.
TEST(GenEnumerator, ApplicationsThatIgnoreAnInputAtTheseSizesAreNotApplied) {
  ParamDomains d = small_domains();
  d["scale"] = {std::string("1")};
  Space s = make_test_space({"softmax", "attention"},
                            {{"q1", {1, 2, 3, 4}, Role::Data},
                             {"k1", {1, 2, 3, 4}, Role::Data},
                             {"e1", {1, 2, 1, 4}, Role::Data}},
                            2, d);
  GraphEvaluator ev(s);
  Evaluator& x = ev.evaluator();
  auto type = [&](std::vector<int64_t> shape) {
    TensorType t;
    t.shape = std::move(shape);
    return x.types().intern(t);
  };
  uint32_t softmax = 0, attention = 0;
  for (size_t v = 0; v < s.variants.size(); ++v)
    (s.variants[v].name == "softmax" ? softmax : attention) = static_cast<uint32_t>(v);
  const TypeId rows[1] = {type({2, 4})}, column[1] = {type({4, 1})};
  EXPECT_TRUE(x.apply(softmax, rows).ok);
  EXPECT_FALSE(x.apply(softmax, column).ok);
  const TypeId three_keys[3] = {type({1, 2, 3, 4}), type({1, 2, 3, 4}), type({1, 2, 3, 4})};
  const TypeId one_key[3] = {type({1, 2, 3, 4}), type({1, 2, 1, 4}), type({1, 2, 1, 4})};
  EXPECT_TRUE(x.apply(attention, three_keys).ok);
  EXPECT_FALSE(x.apply(attention, one_key).ok);

  // In the enumeration e1 may be queries (one query row), never keys; attention over k1's three
  // keys is applied.
  const TensorId e1 = 2, k1 = 1;
  size_t over_k1 = 0;
  for (const CompactGraph& g : graphs_with_checked_fingerprints(s))
    for (int k = 0; k < g.num_ops; ++k) {
      if (g.ops[k].variant != attention) continue;
      EXPECT_NE(g.ops[k].in[1], e1) << graph_str(s, g);
      over_k1 += g.ops[k].in[1] == k1;
    }
  EXPECT_GT(over_k1, 0u);
}

TEST(GenEnumerator, AliasesAreFoundByTesting) {
  ParamDomains d = testing::small_domains();
  d["kernel"] = {int64_t{1}};
  d["stride"] = {int64_t{2}};
  Space s = make_test_space({"poolavg", "poolmax"}, {{"i1", {2, 2, 5, 5}, Role::Data}}, 1, d);
  ASSERT_EQ(s.aliases.size(), 1u);  // a 1x1 window: max and average are the same strided copy
  EXPECT_EQ(s.variants[s.aliases[0].variant].name, "poolmax");
  EXPECT_EQ(s.variants[s.aliases[0].same_as].name, "poolavg");
}

// A run that will fill its disk is told early: once a fiftieth of the root tasks is done, the
// bytes spilled are projected over every task and compared with the folder's free space,
// once, as a warning.
TEST(GenEnumerator, SpillingPastTheFreeSpaceIsForecastOnce) {
  struct Warnings : Reporter {
    std::vector<std::string> lines;
    void warn(std::string_view l) override { lines.emplace_back(l); }
  };
  const uint64_t gib = uint64_t{1} << 30;
  auto free_of = [&](uint64_t bytes) {
    return [bytes](const std::string&) { return std::optional<uint64_t>(bytes); };
  };
  Warnings w;
  SpillForecast tight("/spill", 1, free_of(100 * gib));
  tight.check(4, 441, 2 * gib, w);  // before a fiftieth of the tasks: no look yet
  EXPECT_TRUE(w.lines.empty());
  tight.check(9, 441, 3 * gib, w);  // 3 GiB over 9 tasks: about 147 GiB for 441
  ASSERT_EQ(w.lines.size(), 1u);
  EXPECT_NE(w.lines[0].find("about 147 GiB, and /spill has 100.0 GiB free"), std::string::npos)
      << w.lines[0];
  tight.check(20, 441, 10 * gib, w);  // once only
  EXPECT_EQ(w.lines.size(), 1u);
  Warnings roomy;
  SpillForecast enough("/spill", 1, free_of(200 * gib));
  enough.check(9, 441, 3 * gib, roomy);
  EXPECT_TRUE(roomy.lines.empty());
  // Two ranks writing shares of that size to one shared folder need twice as much.
  Warnings shared;
  SpillForecast two("/spill", 2, free_of(200 * gib));
  two.check(9, 441, 3 * gib, shared);
  ASSERT_EQ(shared.lines.size(), 1u);
  EXPECT_NE(shared.lines[0].find("about 294 GiB on its 2 ranks"), std::string::npos)
      << shared.lines[0];
  // The real file system answers for an existing folder and not for a missing one.
  EXPECT_TRUE(SpillForecast::filesystem_free_bytes("/").has_value());
  EXPECT_FALSE(SpillForecast::filesystem_free_bytes("/no/such/folder/here").has_value());
}

}  // namespace
}  // namespace graphsub::gen
