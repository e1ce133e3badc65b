// Pricing rule applications before building them (opt/application_price.h): the price equals
// the cost of the graph the application builds, a priced apply emits exactly the candidates of
// a plain one (same graphs, same ordinals), refused prices build nothing, and the memo of
// target instantiations recognises bindings only by their exact types, variable sharing and
// values, and replays the nodes it recorded.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "core/error.h"
#include "ir/builder.h"
#include "ir/hash.h"
#include "models/models.h"
#include "opt/application_price.h"
#include "opt/graph_index.h"
#include "opt/pattern.h"
#include "opt/rule_library.h"
#include "opt/rule_transform.h"
#include "opt/target_memo.h"
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

struct Emitted {
  uint64_t hash;
  size_t ordinal;
  double cost;
};

struct Priced {
  std::vector<Emitted> emitted;
  size_t admit_calls = 0;
  size_t mismatches = 0;
};

// The cost of every live node of `g` (indexed by node id) and of the whole graph.
std::pair<std::vector<double>, double> node_costs(const Graph& g, CostModel& model,
                                                  const std::vector<uint8_t>& constant) {
  std::vector<double> costs(g.num_slots(), 0);
  double total = model.per_graph_cost();
  for (NodeId id = 0; id < g.num_slots(); ++id)
    if (g.alive(id)) total += costs[id] = model.node_cost(g, id, constant);
  return {std::move(costs), total};
}

// Applies every rule transform to `g` priced, admitting when `admit_all`, and checks each
// emitted candidate's price against the cost of its graph computed from scratch.
Priced apply_priced(const Graph& g, CostModel& model, bool admit_all) {
  GraphIndex ix(g);
  auto constant = constant_nodes(g);
  auto [costs, total] = node_costs(g, model, constant);
  Priced out;
  std::optional<double> last;
  Pricing pricing{costs, total, constant, model, [&](double c) {
                    ++out.admit_calls;
                    last = c;
                    return admit_all;
                  }};
  for (const Transform* t : library().transforms()) {
    if (t->origin() == "built-in") continue;
    t->apply_priced(ix, pricing, [&](Candidate&& c) {
      EXPECT_TRUE(c.admitted);
      EXPECT_TRUE(c.ordinal.has_value());
      EXPECT_TRUE(last.has_value());
      double full = model.graph_cost(c.graph);
      if (std::abs(*last - full) > 1e-9 * std::max(1.0, std::abs(full))) {
        ++out.mismatches;
        ADD_FAILURE() << t->name() << " at " << c.where << ": priced " << *last << ", built "
                      << full;
      }
      out.emitted.push_back({structural_hash(c.graph), c.ordinal.value_or(0), full});
      last.reset();
    });
  }
  return out;
}

std::vector<Emitted> apply_plain(const Graph& g, CostModel& model) {
  GraphIndex ix(g);
  std::vector<Emitted> out;
  for (const Transform* t : library().transforms()) {
    if (t->origin() == "built-in") continue;
    t->apply(ix, [&](Candidate&& c) {
      out.push_back({structural_hash(c.graph), c.ordinal.value_or(0), model.graph_cost(c.graph)});
    });
  }
  return out;
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
    t->apply(ix, [&](Candidate&& c) {
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

TEST(OptPricing, PriceIsTheCostOfTheBuiltGraphAndPlainApplyAgrees) {
  OverheadCost model;
  size_t total = 0;
  for (const Graph& g : test_graphs()) {
    Priced p = apply_priced(g, model, true);
    EXPECT_EQ(p.mismatches, 0u);
    EXPECT_EQ(p.admit_calls, p.emitted.size());
    auto plain = apply_plain(g, model);
    ASSERT_EQ(plain.size(), p.emitted.size());
    for (size_t i = 0; i < plain.size(); ++i) {
      EXPECT_EQ(plain[i].hash, p.emitted[i].hash);
      EXPECT_EQ(plain[i].ordinal, p.emitted[i].ordinal);
    }
    total += plain.size();
  }
  EXPECT_GT(total, 100u);  // the library applies widely to these models
}

TEST(OptPricing, RefusedPricesBuildNothing) {
  OverheadCost model;
  Graph g = nasrnn(false, 8, 2);
  Priced p = apply_priced(g, model, false);
  EXPECT_TRUE(p.emitted.empty());
  EXPECT_EQ(p.admit_calls, apply_plain(g, model).size());
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
  memo.add(g, {x, y}, one, {true, std::nullopt});
  ASSERT_NE(memo.find(g, {x, y}, one), nullptr);
  EXPECT_TRUE(memo.find(g, {x, y}, one)->fails);
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
    Pricing pricing{costs, total, constant, model, [](double) { return true; }};
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
        auto via_template = price_template(ix, *rec, m.vars, m.outputs, m.internal, pricing, buf);
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

// The built-in merges price each application before building it, like the rule transforms:
// the same candidates and ordinals as their plain apply, each price the cost of the built
// graph, and nothing built when every price is refused.
void check_priced_agrees_with_plain(const std::string& name, const Graph& g, size_t min_apps) {
  SCOPED_TRACE(name);
  OverheadCost model;
  const Transform* merge = nullptr;
  for (const Transform* t : library().transforms())
    if (t->name() == name) merge = t;
  ASSERT_NE(merge, nullptr);
  GraphIndex ix(g);
  auto constant = constant_nodes(g);
  auto [costs, total] = node_costs(g, model, constant);
  for (bool admit_all : {true, false}) {
    size_t admit_calls = 0;
    std::optional<double> last;
    Pricing pricing{costs, total, constant, model, [&](double c) {
                      ++admit_calls;
                      last = c;
                      return admit_all;
                    }};
    std::vector<std::pair<uint64_t, size_t>> priced, plain;
    merge->apply_priced(ix, pricing, [&](Candidate&& c) {
      EXPECT_TRUE(c.admitted);
      ASSERT_TRUE(last.has_value());
      double full = model.graph_cost(c.graph);
      EXPECT_NEAR(*last, full, 1e-9 * std::max(1.0, std::abs(full))) << c.where;
      priced.push_back({structural_hash(c.graph), c.ordinal.value_or(~size_t{0})});
      last.reset();
    });
    merge->apply(ix, [&](Candidate&& c) {
      // Plain applications are numbered in the order they are emitted.
      EXPECT_EQ(c.ordinal.value_or(plain.size()), plain.size());
      plain.push_back({structural_hash(c.graph), c.ordinal.value_or(~size_t{0})});
    });
    EXPECT_GE(plain.size(), min_apps);
    EXPECT_EQ(admit_calls, plain.size());
    if (admit_all)
      EXPECT_EQ(priced, plain);
    else
      EXPECT_TRUE(priced.empty());
  }
}

TEST(OptPricing, MergeGroupConvsPricedAgreesWithPlain) {
  check_priced_agrees_with_plain("merge-group-convs", resnext50(false), 6);  // grouped convs
}

TEST(OptPricing, MergeConvsPricedAgreesWithPlain) {
  // Inception's branches start with convs reading one tensor.
  check_priced_agrees_with_plain("merge-convs", inception_v3(false), 6);
}

}  // namespace
}  // namespace graphsub::opt
