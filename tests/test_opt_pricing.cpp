// The search's pricing of applications before building them (opt/application_price.h): the
// price of what an applier describes equals the cost of the graph the same application builds,
// a price exists exactly when the graph builds, and the memo of target instantiations
// recognises bindings only by their exact types, variable sharing and values, and replays the
// nodes it recorded.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "core/error.h"
#include "ir/builder.h"
#include "ir/hash.h"
#include "models/models.h"
#include "opt/match/graph_index.h"
#include "opt/match/pattern.h"
#include "opt/search/application_price.h"
#include "opt/transforms/builder.h"
#include "opt/transforms/rule_library.h"
#include "opt/transforms/rule_transform.h"
#include "opt/transforms/target_memo.h"
#include "rules/instantiate.h"
#include "support/overhead_cost.h"
#include "support/shipped_library.h"

namespace graphsub::opt {
namespace {

using testutil::OverheadCost;

// The whole default library (generated rules, merges, built-ins), loaded once.
const RuleLibrary& library() {
  return testutil::shipped_library();
}

// The cost of every live node of `g` (indexed by node id) and of the whole graph.
std::pair<std::vector<double>, double> node_costs(const Graph& g, CostModel& model,
                                                  const std::vector<uint8_t>& constant) {
  std::vector<double> costs(g.num_slots(), 0);
  double total = model.per_graph_cost();
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id)) total += costs[id] = model.node_cost(g, id, constant);
  return {std::move(costs), total};
}

// Every application of `t` to `g`, described and priced as the search does, then built: a
// price exists exactly when the graph builds, and equals the built graph's cost. Returns the
// number of applications built.
size_t check_prices(const Transform& t, const Graph& g, CostModel& model) {
  SCOPED_TRACE(t.name());
  GraphIndex ix(g);
  auto constant = constant_nodes(g);
  auto [costs, total] = node_costs(g, model, constant);
  const ParentCosts parent{costs, total, constant, model};
  ScratchGraph scratch;
  std::vector<Replacement> reps;
  PriceBuffers buf;
  std::vector<Match> matches;
  size_t built = 0;
  const size_t n = t.find(ix, matches);
  for (size_t k = 0; k < n; ++k) {
    std::optional<double> price;
    {
      Builder described(g, scratch, reps);
      if (t.apply(ix, matches[k], described))
        price = price_description(ix, described, matches[k].internal, parent, buf);
    }
    Result<Graph> graph = build_application(t, ix, matches[k]);
    EXPECT_EQ(price.has_value(), static_cast<bool>(graph)) << "match " << k;
    if (!price || !graph) continue;
    double full = model.graph_cost(*graph);
    EXPECT_NEAR(*price, full, 1e-9 * std::max(1.0, std::abs(full)))
        << "match " << k << " at " << t.where(ix, matches[k]);
    ++built;
  }
  return built;
}

std::vector<Graph> test_graphs() {
  std::vector<Graph> gs = {demo_model(false), nasrnn(false, 8, 2)};
  BertConfig small;
  small.batch = 2;
  small.seq = 8;
  small.hidden = 64;
  small.heads = 4;
  small.layers = 1;
  gs.push_back(bert(false, small));
  // A graph one merge away from NasRNN: split/concat nodes, holes in the node table.
  GraphIndex ix(gs[1]);
  for (const Transform* t : library().transforms()) {
    if (t->origin().find("merges.rules") == std::string::npos) continue;
    std::optional<Graph> child;
    apply_everywhere(*t, ix, [&](Candidate&& c) {
      if (!child) child = std::move(c.graph);
    });
    if (child) {
      gs.push_back(std::move(*child));
      break;
    }
  }
  EXPECT_EQ(gs.size(), 4u);
  // A split of a concat: rewriting it to the concat's first input kills the concat, the split
  // and, above the match, the tanh only the concat read.
  GraphBuilder b(false);
  auto x = b.input("x", {4, 8});
  auto joined = b.concat(1, {b.relu(x), b.tanh(b.input("y", {4, 8}))});
  auto parts = b.op_multi("split", {joined}, {{"axis", 1}, {"sizes", std::vector<int64_t>{8, 8}}});
  b.output("a", b.ewadd(parts[0], x));
  gs.push_back(b.finish());
  return gs;
}

TEST(OptPricing, PriceIsTheCostOfTheBuiltGraph) {
  OverheadCost model;
  size_t total = 0;
  for (const Graph& g : test_graphs())
    for (const Transform* t : library().transforms()) total += check_prices(*t, g, model);
  EXPECT_GT(total, 100u);  // the library applies widely to these models
}

TEST(OptPricing, TargetMemoMatchesExactTypesBindingsAndValues) {
  GraphBuilder b;
  auto x = b.input("x", {2, 4});
  auto y = b.input("y", {2, 4});
  auto z = b.input("z", {4, 2});
  b.output("o", b.op("ewadd", {x, y}));
  Graph g = b.finish();
  TargetMemo memo;
  TargetMemo::Params one = {AxiomParam{int64_t{1}}, std::nullopt};
  TargetMemo::Params other = {AxiomParam{int64_t{2}}, std::nullopt};
  TargetMemo::Params symbol = {AxiomParam{std::string("same")}, std::nullopt};
  EXPECT_EQ(memo.find(g, {x, y}, one), nullptr);
  memo.add(g, {x, y}, one, {NoMatch("does not type-check"), std::nullopt});
  ASSERT_NE(memo.find(g, {x, y}, one), nullptr);
  ASSERT_TRUE(memo.find(g, {x, y}, one)->failure.has_value());
  EXPECT_EQ(memo.find(g, {x, y}, one)->failure->reason(), "does not type-check");
  EXPECT_NE(memo.find(g, {y, x}, one), nullptr);  // same types
  EXPECT_EQ(memo.find(g, {x, x}, one), nullptr);  // one tensor for both variables
  EXPECT_EQ(memo.find(g, {x, z}, one), nullptr);
  EXPECT_EQ(memo.find(g, {x}, one), nullptr);
  EXPECT_EQ(memo.find(g, {x, y}, other), nullptr);
  EXPECT_EQ(memo.find(g, {x, y}, symbol), nullptr);
}

// Pricing a memoised target from its recorded nodes gives exactly the price of replaying them
// into a scratch copy of the graph, for every match of every library rule on the test graphs.
TEST(OptPricing, TemplatePriceEqualsScratchPrice) {
  OverheadCost model;
  size_t compared = 0;
  for (const Graph& g : test_graphs()) {
    GraphIndex ix(g);
    auto constant = constant_nodes(g);
    auto [costs, total] = node_costs(g, model, constant);
    const ParentCosts pricing{costs, total, constant, model};
    PriceBuffers buf;
    for (const Transform* t : library().transforms()) {
      auto* rt = dynamic_cast<const RuleTransform*>(t);
      if (!rt) continue;
      Pattern pattern(rt->rule());
      for (const Match& m : pattern.find(ix)) {
        rules::Bindings b;
        for (size_t v = 0; v < m.vars.size(); ++v)
          b.tensors.emplace(pattern.tensor_vars()[v], m.vars[v]);
        for (size_t p = 0; p < m.params.size(); ++p)
          if (m.params[p]) b.params.emplace(pattern.param_vars()[p], *m.params[p]);
        Graph built = g;
        auto first = static_cast<NodeId>(built.num_slots());
        std::vector<TensorRef> targets;
        try {
          targets = rules::instantiate(built, rt->rule().target, b);
        } catch (const Error&) {
          continue;  // not an application
        }
        auto rec = Template::record(built, first, m.vars, targets);
        if (!rec) continue;
        Graph scratch = g;
        auto replayed = rec->replay(scratch, m.vars);
        std::vector<Replacement> reps;
        for (size_t i = 0; i < replayed.size(); ++i) reps.push_back({m.outputs[i], replayed[i]});
        auto via_graph = price_application(ix, scratch, first, reps, m.internal, pricing, buf);
        // The same nodes described by the template: ids from the parent's table size on.
        std::vector<Replacement> described;
        for (size_t i = 0; i < rec->targets.size(); ++i) {
          const Template::Ref& r = rec->targets[i];
          described.push_back(
              {m.outputs[i], r.is_var ? m.vars[r.index] : TensorRef{first + r.index, r.output}});
        }
        auto via_template = price_template(ix, *rec, m.vars, described, m.internal, pricing, buf);
        ASSERT_EQ(via_graph.has_value(), via_template.has_value()) << t->name();
        if (!via_graph) continue;
        EXPECT_EQ(*via_graph, *via_template) << t->name();  // exactly: the same sums
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 100u);
}

TEST(OptPricing, TemplateReplaysTheRecordedNodes) {
  GraphBuilder b;
  auto x = b.input("x", {2, 4});
  auto y = b.input("y", {2, 4});
  b.output("o", b.op("ewadd", {x, y}));
  Graph g = b.finish();
  auto first = static_cast<NodeId>(g.num_slots());
  TensorRef s = {g.add("ewmul", {x, y}), 0};
  TensorRef t = {g.add("relu", {s}), 0};
  auto rec = Template::record(g, first, {x, y}, {t});
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->nodes.size(), 2u);
  EXPECT_FALSE(Template::record(g, first, {x}, {t}).has_value());  // y is not bound
  Graph h = g;
  auto out = rec->replay(h, {y, x});
  ASSERT_EQ(out.size(), 1u);
  const Node& relu = h.node(out[0].node);
  EXPECT_EQ(relu.op->name, "relu");
  const Node& mul = h.node(relu.inputs[0].node);
  EXPECT_EQ(mul.op->name, "ewmul");
  EXPECT_EQ(mul.inputs, (std::vector<TensorRef>{y, x}));
  EXPECT_EQ(h.type(out[0]), g.type(t));
}

}  // namespace
}  // namespace graphsub::opt

namespace graphsub::opt {
namespace {

// The built-in transforms on models where they apply often.
void check_builtin_prices(const std::string& name, const Graph& g, size_t min_apps) {
  OverheadCost model;
  for (const Transform* t : library().transforms()) {
    if (t->name() == name) {
      EXPECT_GE(check_prices(*t, g, model), min_apps) << name;
    }
  }
}

TEST(OptPricing, MergeGroupConvsPriceIsTheCostOfTheBuiltGraph) {
  check_builtin_prices("merge-group-convs", resnext50(false), 6);  // grouped convs
}

TEST(OptPricing, MergeConvsPriceIsTheCostOfTheBuiltGraph) {
  // Inception's branches start with convs reading one tensor.
  check_builtin_prices("merge-convs", inception_v3(false), 6);
}

TEST(OptPricing, FusionsAndFoldsPriceIsTheCostOfTheBuiltGraph) {
  // Residual blocks of convs without activations, batchnorms, duplicates, a split undone.
  GraphBuilder b(false);
  auto x = b.input("x", {1, 4, 8, 8});
  auto y = x;
  for (int i = 0; i < 3; ++i) {
    auto w = b.weight(fmt::format("w{}", i), {4, 4, 3, 3});
    auto c = b.conv(y, w, {.pad = 1});
    y = b.relu(b.ewadd(b.batchnorm(c, fmt::format("bn{}", i)), y));
    y = b.relu(b.ewadd(b.conv(y, w, {.pad = 1}), y));
  }
  auto parts = b.op_multi("split", {b.concat(1, {b.tanh(y), b.tanh(y)})},
                          {{"axis", 1}, {"sizes", std::vector<int64_t>{4, 4}}});
  b.output("y", b.concat(1, {parts[0], parts[1]}));
  b.output("z", b.relu(b.conv(x, b.weight("wz", {4, 4, 1, 1}))));
  Graph g = b.finish();
  check_builtin_prices("fuse-conv-add", g, 1);
  check_builtin_prices("fuse-activation-conv", g, 1);
  check_builtin_prices("fold-batchnorm", g, 3);
  check_builtin_prices("merge-duplicates", g, 1);
  check_builtin_prices("concat-of-split", g, 1);
}

}  // namespace
}  // namespace graphsub::opt
