// The optimizer's own rule files are proved by the verifier from the axioms:
// rules/merges.rules, rules/activations.rules and rules/indexing.rules (loaded by default),
// rules/ort_fused.rules (with --ort-contrib-ops) and rules/structural.rules (the rule-language
// forms of the built-in structural rules).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>

#include "check/equivalence.h"
#include "driver/data_paths.h"
#include "ir/builder.h"
#include "opt/match/graph_index.h"
#include "opt/transforms/canonical_views.h"
#include "opt/transforms/rule_library.h"
#include "opt/transforms/rule_transform.h"
#include "rules/orientations.h"
#include "rules/rule_parser.h"
#include "rules/rule_printer.h"
#include "test_onnx_support.h"
#include "verify/verifier.h"

namespace graphsub {
namespace {

rules::RuleSet load(const std::string& file, const rules::RuleSet& axioms) {
  return rules::load_rules(std::string(GRAPHSUB_SOURCE_DIR) + "/" + file, &axioms);
}

// Every rule of the file is proved; under the sanitizers every 8th (the release suite proves
// them all, and a sample runs the same verifier code: proving the 960 equalities of
// indexing.rules took 167 s there, the longest test of the CI run).
void expect_all_proved(const std::string& file, size_t at_least) {
  auto axioms = rules::load_rules(driver::shipped_axioms());
  auto rs = load(file, axioms);
  ASSERT_GE(rs.rules.size(), at_least) << file;
  verify::VerifyOptions opts;
  opts.threads = 2;
  verify::Verifier v(axioms, opts);
  const size_t stride = testing::sanitized() ? 8 : 1;
  std::vector<rules::Rule> statements;
  for (size_t i = 0; i < rs.rules.size(); i += stride)
    statements.push_back(rules::statement(rs.rules[i]));
  auto verdicts = v.verify_all(statements);
  for (auto& r : verdicts)
    EXPECT_TRUE(r.proved()) << file << ": " << r.name << ": " << verify::verdict_name(r.verdict)
                            << " " << r.reason;
}

TEST(OptRules, MergesAreProved) {
  expect_all_proved("rules/merges.rules", 2);
}

TEST(OptRules, StructuralRulesAreProved) {
  expect_all_proved("rules/structural.rules", 8);
}

// How many orientations of a library's equalities name each operator, and whether one of them
// rewrites `source` into `target` (one-term sides, as printed).
// The command line a generated library's header states (its second line).
std::string command_of(const std::string& file) {
  std::ifstream f(std::string(GRAPHSUB_SOURCE_DIR) + "/" + file);
  std::string line;
  std::getline(f, line);
  std::getline(f, line);
  return line;
}

struct LibraryUse {
  std::map<std::string, int> with;
  bool has = false;
};
LibraryUse library_use(const std::string& file, const std::vector<std::string>& ops,
                       const std::string& source, const std::string& target) {
  auto axioms = rules::load_rules(driver::shipped_axioms());
  auto rs = load(file, axioms);
  LibraryUse u;
  for (const auto& equality : rs.rules) {
    for (const auto& r : rules::orientations(equality)) {
      std::string text = rules::rule_str(r);
      for (const std::string& op : ops)
        if (text.find(op) != std::string::npos) ++u.with[op];
      if (r.source.size() == 1 && rules::term_str(r.source[0]) == source &&
          rules::term_str(r.target[0]) == target)
        u.has = true;
    }
  }
  return u;
}

bool shipped(const std::string& file) {
  auto files = driver::shipped_rule_files();
  return std::any_of(files.begin(), files.end(),
                     [&](const std::string& f) { return f.ends_with(file); });
}

// The library generated over the activations of modern networks has rules with each of them,
// among them the fusion of relu6 into a convolution, and the optimizer loads it by default.
// Rule names are not relied on: generated names may change.
TEST(OptRules, ActivationRulesNameEachNewOperatorAndAreProved) {
  std::vector<std::string> ops = {"(relu6 ",       "(hardswish ",  "(silu ", "(clip ",
                                  "(hardsigmoid ", "(leaky_relu ", "(pow ",  "(prelu "};
  LibraryUse u =
      library_use("rules/activations.rules", ops, "(relu6 (conv ?p_stride ?p_padding none ?a ?b))",
                  "(conv ?p_stride ?p_padding relu6 ?a ?b)");
  for (const std::string& op : ops) EXPECT_GT(u.with[op], 10) << op;
  EXPECT_TRUE(u.has);
  EXPECT_TRUE(shipped("rules/activations.rules"));
  expect_all_proved("rules/activations.rules", 150);  // 185 equalities
}

// The library over reductions, expand, gather, nearest resize and the broadcasting add and mul
// (generated with --with-ops:
// every rule uses one of them) has rules with each, among them a reduction moved into the
// operand of a matmul and a relu computed before the broadcast instead of after it.
TEST(OptRules, IndexingRulesNameEachOperatorAndAreProved) {
  std::vector<std::string> ops = {"(reduce_sum ", "(reduce_mean ", "(expand ", "(gather ",
                                  "(resize ",     "(add ",         "(mul "};
  LibraryUse sum = library_use("rules/indexing.rules", ops, "(reduce_sum 1 (matmul none ?a ?b))",
                               "(matmul none ?a (reduce_sum 1 ?b))");
  for (const std::string& op : ops) EXPECT_GT(sum.with[op], 10) << op;
  EXPECT_TRUE(sum.has);
  EXPECT_TRUE(library_use("rules/indexing.rules", ops, "(relu (expand ?p_target ?a))",
                          "(expand ?p_target (relu ?a))")
                  .has);
  EXPECT_TRUE(shipped("rules/indexing.rules"));
  expect_all_proved("rules/indexing.rules", 500);  // 960 equalities
}

// The library that introduces ONNX Runtime's fused operators (loaded with --ort-contrib-ops
// only, never by default) is generated: its header names the command, it rewrites
// gelu(add(x, b)) into BiasGelu, and every rule is proved.
TEST(OptRules, OrtFusedRulesAreGeneratedProvedAndNotLoadedByDefault) {
  std::vector<std::string> ops = {"(ort_bias_gelu ", "(ort_fast_gelu ", "(ort_fused_matmul "};
  LibraryUse u =
      library_use("rules/ort_fused.rules", ops, "(gelu (add ?a ?b))", "(ort_bias_gelu ?a ?b)");
  for (const std::string& op : ops) EXPECT_GT(u.with[op], 0) << op;
  EXPECT_TRUE(u.has);
  EXPECT_FALSE(shipped("rules/ort_fused.rules"));
  std::vector<std::string> files = driver::shipped_ort_fused_rules();
  ASSERT_EQ(files.size(), 3u);
  EXPECT_TRUE(files[0].ends_with("rules/ort_fused.rules"));
  EXPECT_TRUE(files[1].ends_with("rules/ort_attention.rules"));
  EXPECT_TRUE(files[2].ends_with("rules/onnx_attention.rules"));
  std::string header = command_of("rules/ort_fused.rules");
  EXPECT_NE(header.find("graphsub generate --max-ops 2"), std::string::npos) << header;
  expect_all_proved("rules/ort_fused.rules", 50);
}

// Calls f(rule direction, candidate) for every candidate that the attention library (rules/
// ort_attention.rules unless named) makes of g, each rule in each direction, at every match.
void for_each_attention_candidate(const Graph& g,
                                  const std::function<void(const std::string&, const Graph&)>& f,
                                  const std::string& library = "rules/ort_attention.rules") {
  auto axioms = rules::load_rules(driver::shipped_axioms());
  auto rs = load(library, axioms);
  opt::GraphIndex ix(g);
  for (const rules::Rule& r : rs.rules)
    for (const rules::Rule& dir : rules::orientations(r)) {
      opt::RuleTransform t(dir);
      opt::apply_everywhere(t, ix, [&](opt::Candidate&& cand) { f(dir.name, cand.graph); });
    }
}

// How the scores of an attention block take a mask: none, one broadcast over the heads
// ([B, 1, S, S], a padding or causal mask: add), one of the scores' shape ([B, H, S, S], T5's
// position bias: ewadd), and one broadcast over the batch too ([1, 1, S, S]), outside the
// language's masked form.
enum class Mask { None, PerBatch, Full, Shared };

// An attention block's end as exporters write it: the softmax of the scores (ending in torch's
// Where(IsNaN(p), 0, p) where `guarded`), its product with the values, the heads moved back
// after the sequence and merged into the output y.
void end_attention(GraphBuilder& b, TensorRef scores, TensorRef v, bool guarded,
                   std::vector<int64_t> merged) {
  auto p = b.softmax(scores);
  auto o = b.matmul(guarded ? b.op("nan_to_zero", {p}) : p, v);
  b.output("y", b.reshape(b.transpose(o, {0, 2, 1, 3}), std::move(merged)));
}

// The candidates that rules/ort_attention.rules makes of a Hugging Face attention block (each
// of q, k, v split into heads and moved before the sequence, the key straight into its
// transpose, 0231, both scaled by d^-1/4, the heads moved back and merged): how many hold one
// MultiHeadAttention, each checked equal to the block and free of transposes. `guarded`: the
// softmax ends in torch's Where(IsNaN(p), 0, p), which the fused form keeps after the operator.
size_t attention_fusions(Mask mask, bool guarded = false) {
  GraphBuilder b;
  const int64_t batch = 2, seq = 3, heads = 2, d = 4, hidden = heads * d;
  auto x = b.input("x", {batch, seq, hidden});
  auto project = [&](const char* w) { return b.matmul(x, b.weight(w, {hidden, hidden})); };
  auto c = b.weight("c", {});  // d^-1/4, a scalar constant
  auto split = [&](TensorRef t, std::vector<int64_t> perm) {
    return b.transpose(b.reshape(t, {batch, seq, heads, d}), std::move(perm));
  };
  auto q = b.op("smul", {split(project("wq"), {0, 2, 1, 3}), c});
  auto kt = b.op("smul", {split(project("wk"), {0, 2, 3, 1}), c});
  auto v = split(project("wv"), {0, 2, 1, 3});
  auto scores = b.matmul(q, kt);
  if (mask == Mask::PerBatch) scores = b.op("add", {scores, b.input("m", {batch, 1, seq, seq})});
  if (mask == Mask::Shared) scores = b.op("add", {scores, b.input("m", {1, 1, seq, seq})});
  if (mask == Mask::Full) scores = b.op("ewadd", {scores, b.input("m", {batch, heads, seq, seq})});
  end_attention(b, scores, v, guarded, {batch, seq, hidden});
  Graph g = b.finish();
  size_t fused = 0;
  for_each_attention_candidate(g, [&](const std::string& rule, const Graph& cand) {
    size_t mha = 0, transposes = 0, inputs = 0, guards = 0;
    for (NodeId id = 0; id < cand.num_slots(); ++id) {
      if (!cand.alive(id)) continue;
      const Node& n = cand.node(id);
      if (n.op->name == "ort_mha") {
        ++mha;
        inputs = n.inputs.size();
      }
      transposes += n.op->name == "transpose";
      guards += n.op->name == "nan_to_zero";
    }
    if (mha != 1) return;
    ++fused;
    EXPECT_EQ(inputs, mask == Mask::None ? 3u : 4u) << rule;
    EXPECT_EQ(transposes, 0u) << rule;
    EXPECT_EQ(guards, guarded ? 1u : 0u) << rule;
    EXPECT_TRUE(check_equivalent(g, cand, {.seed = 7}).ok) << rule;
  });
  return fused;
}

// The candidates that rules/ort_attention.rules makes of a Llama-style attention block whose
// key and value are not heads split out of a projection: the query's heads are rotated (a
// product with a [1, 1, S, D] table, as a rotary embedding ends), the key and value have one
// head appended to a past ([B, 1, P, D]) and repeated for both query heads (grouped-query
// attention), the mask is [B, 1, S, P + S] and the softmax may end in torch's NaN guard. Each
// fusion must hold one MultiHeadAttention taking that key and value as they are ([B, H, L, D]),
// and be equal to the block.
size_t split_kv_attention_fusions(bool guarded) {
  GraphBuilder b;
  const int64_t batch = 2, seq = 3, past = 2, heads = 2, d = 4, hidden = heads * d;
  auto x = b.input("x", {batch, seq, hidden});
  auto project = [&](const char* w, int64_t width) {
    return b.matmul(x, b.weight(w, {hidden, width}));
  };
  auto c = b.weight("c", {});
  auto split = [&](TensorRef t, int64_t h) {
    return b.transpose(b.reshape(t, {batch, seq, h, d}), {0, 2, 1, 3});
  };
  auto q = b.op("mul", {split(project("wq", hidden), heads), b.input("cos", {1, 1, seq, d})});
  auto cached = [&](const char* w, const char* past_name) {
    auto one = b.concat(2, {b.input(past_name, {batch, 1, past, d}), split(project(w, d), 1)});
    return b.concat(1, {one, one});  // the shared head repeated for both query heads
  };
  auto k = cached("wk", "past_k"), v = cached("wv", "past_v");
  auto scores = b.matmul(b.op("smul", {q, c}), b.op("smul", {b.transpose(k, {0, 1, 3, 2}), c}));
  scores = b.op("add", {scores, b.input("m", {batch, 1, seq, past + seq})});
  end_attention(b, scores, v, guarded, {batch, seq, hidden});
  Graph g = b.finish();
  size_t fused = 0;
  for_each_attention_candidate(g, [&](const std::string& rule, const Graph& cand) {
    std::vector<const Node*> mha;
    size_t softmax = 0;
    for (NodeId id = 0; id < cand.num_slots(); ++id) {
      if (!cand.alive(id)) continue;
      if (cand.node(id).op->name == "ort_mha") mha.push_back(&cand.node(id));
      softmax += cand.node(id).op->name == "softmax";
    }
    if (mha.size() != 1) return;
    ++fused;
    EXPECT_EQ(softmax, 0u) << rule;
    ASSERT_EQ(mha[0]->inputs.size(), 4u) << rule;
    EXPECT_EQ(cand.type(mha[0]->inputs[1]).shape, (Shape{batch, heads, past + seq, d})) << rule;
    EXPECT_EQ(mha[0]->attrs.i("num_heads"), heads) << rule;
    EXPECT_TRUE(check_equivalent(g, cand, {.seed = 7}).ok) << rule;
  });
  return fused;
}

// The same count for torch's sequence-first nn.MultiheadAttention as torch 2.15 exports it
// (x [S, B, E]; each of q, k, v reshaped to [S, B*H, D], transposed to [B*H, S, D] and reshaped
// to [B, H, S, D]; q and the key's transpose scaled by d^-1/4; the context moved to [S, B, H, D]
// and merged to [S*B, E] for the output projection), after its chains of reshapes and
// transposes are written in the rule language (opt/transforms/canonical_views.h), as the
// search does with --ort-contrib-ops.
size_t torch_attention_fusions(int64_t batch) {
  GraphBuilder b;
  const int64_t seq = 3, heads = 2, d = 4, hidden = heads * d;
  auto x = b.input("x", {seq, batch, hidden});
  auto project = [&](const char* w) { return b.matmul(x, b.weight(w, {hidden, hidden})); };
  auto c = b.weight("c", {});
  auto heads_of = [&](TensorRef t) {
    auto rows = b.transpose(b.reshape(t, {seq, batch * heads, d}), {1, 0, 2});
    return b.reshape(rows, {batch, heads, seq, d});
  };
  auto q = b.op("smul", {heads_of(project("wq")), c});
  auto kt = b.op("smul", {b.transpose(heads_of(project("wk")), {0, 1, 3, 2}), c});
  auto o = b.matmul(b.softmax(b.matmul(q, kt)), heads_of(project("wv")));
  auto merged = b.reshape(b.transpose(o, {2, 0, 1, 3}), {seq * batch, hidden});
  b.output("y", b.matmul(merged, b.weight("wo", {hidden, hidden})));
  Graph original = b.finish();
  Graph g = original;
  EXPECT_EQ(opt::canonicalize_views(g), 4u);  // q, k, v and the context
  size_t fused = 0;
  for_each_attention_candidate(g, [&](const std::string& rule, const Graph& cand) {
    size_t mha = 0, softmax = 0;
    for (NodeId id = 0; id < cand.num_slots(); ++id) {
      if (!cand.alive(id)) continue;
      mha += cand.node(id).op->name == "ort_mha";
      softmax += cand.node(id).op->name == "softmax";
    }
    if (mha != 1) return;
    ++fused;
    EXPECT_EQ(softmax, 0u) << rule;
    EXPECT_TRUE(check_equivalent(original, cand, {.seed = 7}).ok) << rule;
  });
  return fused;
}

TEST(OptRules, OrtAttentionRulesFindTorchsSequenceFirstAttention) {
  EXPECT_EQ(torch_attention_fusions(2), 1u);
  EXPECT_EQ(torch_attention_fusions(1), 1u);  // the zoo's export: a batch of one, fixed
}

// The library that introduces MultiHeadAttention is unfolded from its definitions (`graphsub
// unfold`, its header's command) and proved; it finds attention as Hugging Face's exports
// write it, with the mask as its attention bias where the mask has the batch's own, and with
// torch's NaN guard after the softmax.
TEST(OptRules, OrtAttentionRulesFindMultiHeadAttentionAsExportersWriteIt) {
  std::string header = command_of("rules/ort_attention.rules");
  EXPECT_NE(header.find("graphsub unfold --term"), std::string::npos) << header;
  EXPECT_NE(header.find("ort_mha_heads_masked"), std::string::npos) << header;
  expect_all_proved("rules/ort_attention.rules", 20);
  EXPECT_EQ(attention_fusions(Mask::None), 1u);  // one form of the library is this block's
  EXPECT_EQ(attention_fusions(Mask::PerBatch), 1u);
  EXPECT_EQ(attention_fusions(Mask::Full), 1u);
  EXPECT_EQ(attention_fusions(Mask::Shared), 0u);
  // torch's guarded softmax (BERT, DistilBERT, RoBERTa, GPT-2 as torch 2.15 exports them).
  EXPECT_EQ(attention_fusions(Mask::PerBatch, true), 1u);
  EXPECT_EQ(attention_fusions(Mask::Full, true), 1u);
  EXPECT_EQ(attention_fusions(Mask::Shared, true), 0u);
  // Llama's: rotated queries, a past appended to the keys and values, their heads shared.
  EXPECT_EQ(split_kv_attention_fusions(false), 1u);
  EXPECT_EQ(split_kv_attention_fusions(true), 1u);
}

// The candidates that rules/onnx_attention.rules makes of a Llama-style attention block as the
// ONNX importer reads Hugging Face's export: four query heads, two key/value heads ([B, 2, P +
// S, D] after the past) repeated for their groups as reshape, expand and reshape ([B, 2, 1, L,
// D] to [B, 2, 2, L, D] to [B, 4, L, D]), q and the key's transpose scaled, a mask [B, 1, S, L]
// and torch's NaN guard. Each fusion must hold one ONNX Attention taking the shared heads as
// they are, with the guard after it, and be equal to the block.
size_t grouped_attention_fusions() {
  GraphBuilder b;
  const int64_t batch = 2, seq = 3, past = 2, heads = 4, kv = 2, d = 4, len = past + seq;
  auto x = b.input("x", {batch, seq, heads * d});
  auto split = [&](const char* w, int64_t h) {
    auto t = b.matmul(x, b.weight(w, {heads * d, h * d}));
    return b.transpose(b.reshape(t, {batch, seq, h, d}), {0, 2, 1, 3});
  };
  auto repeated = [&](const char* w, const char* past_name) {
    auto cache = b.concat(2, {b.input(past_name, {batch, kv, past, d}), split(w, kv)});
    auto wide = b.op("expand", {b.reshape(cache, {batch, kv, 1, len, d})},
                     {{"shape", std::vector<int64_t>{batch, kv, heads / kv, len, d}}});
    return b.reshape(wide, {batch, heads, len, d});
  };
  auto k = repeated("wk", "past_k"), v = repeated("wv", "past_v");
  auto c = b.weight("c", {});
  auto scores = b.matmul(b.op("smul", {split("wq", heads), c}),
                         b.op("smul", {b.transpose(k, {0, 1, 3, 2}), c}));
  scores = b.op("add", {scores, b.input("m", {batch, 1, seq, len})});
  end_attention(b, scores, v, true, {batch, seq, heads * d});
  Graph g = b.finish();
  size_t fused = 0;
  for_each_attention_candidate(
      g,
      [&](const std::string& rule, const Graph& cand) {
        std::vector<const Node*> att;
        size_t expands = 0, guards = 0;
        for (NodeId id = 0; id < cand.num_slots(); ++id) {
          if (!cand.alive(id)) continue;
          if (cand.node(id).op->name == "attention") att.push_back(&cand.node(id));
          expands += cand.node(id).op->name == "expand";
          guards += cand.node(id).op->name == "nan_to_zero";
        }
        if (att.size() != 1) return;
        ++fused;
        ASSERT_EQ(att[0]->inputs.size(), 4u) << rule;
        EXPECT_EQ(cand.type(att[0]->inputs[1]).shape, (Shape{batch, kv, len, d})) << rule;
        EXPECT_EQ(expands, 0u) << rule;  // no repeat left
        EXPECT_EQ(guards, 1u) << rule;
        EXPECT_TRUE(check_equivalent(g, cand, {.seed = 7}).ok) << rule;
      },
      "rules/onnx_attention.rules");
  return fused;
}

// The library that introduces ONNX's Attention (opset 23) over grouped key/value heads is
// unfolded from its definition and proved; it finds the repeat of Llama's shared heads.
TEST(OptRules, OnnxAttentionRulesFindGroupedQueryAttentionAsExportersWriteIt) {
  std::string header = command_of("rules/onnx_attention.rules");
  EXPECT_NE(header.find("graphsub unfold --term"), std::string::npos) << header;
  EXPECT_NE(header.find("attention_grouped_masked"), std::string::npos) << header;
  expect_all_proved("rules/onnx_attention.rules", 20);
  // Two forms match: the key's factor alone (the scaled query is their ?a), and both factors.
  EXPECT_EQ(grouped_attention_fusions(), 2u);
}

// A longer form (layernorm_b: LayerNormalization with its bias) matches only the nodes with
// that many inputs, and the plain form only those without the optional input; the rule that
// fuses the biased form writes SkipLayerNormalization with beta.
TEST(OptRules, ALongerFormMatchesOnlyNodesWithItsOptionalInput) {
  auto axioms = rules::load_rules(driver::shipped_axioms());
  auto rs = rules::parse_rules(R"((rule skip-b (tensors ?x ?s ?g ?b) (params (?e eps))
      (source (layernorm_b ?e (ewadd ?x ?s) ?g ?b)) (target (ort_skip_layernorm_b ?e ?x ?s ?g ?b)))
    (rule skip (tensors ?x ?s ?g) (params (?e eps))
      (source (layernorm ?e (ewadd ?x ?s) ?g)) (target (ort_skip_layernorm ?e ?x ?s ?g))))",
                               "t.rules", &axioms);
  ASSERT_EQ(rs.rules.size(), 2u);
  opt::RuleTransform with_bias(rs.rules[0]), plain(rs.rules[1]);
  auto count = [](const opt::Transform& t, const Graph& g, std::vector<size_t>* inputs) {
    opt::GraphIndex ix(g);
    size_t n = 0;
    opt::apply_everywhere(t, ix, [&](opt::Candidate&& c) {
      ++n;
      for (NodeId id = 0; id < c.graph.num_slots(); ++id)
        if (c.graph.alive(id) && c.graph.node(id).op->name == "ort_skip_layernorm")
          inputs->push_back(c.graph.node(id).inputs.size());
    });
    return n;
  };
  for (bool bias : {true, false}) {
    GraphBuilder b;
    auto sum = b.ewadd(b.input("x", {2, 8}), b.input("s", {2, 8}));
    std::vector<TensorRef> in{sum, b.weight("g", {8})};
    if (bias) in.push_back(b.weight("b", {8}));
    b.output("y", b.op("layernorm", in));
    Graph g = b.finish();
    std::vector<size_t> written;
    EXPECT_EQ(count(with_bias, g, &written), bias ? 1u : 0u) << bias;
    EXPECT_EQ(count(plain, g, &written), bias ? 0u : 1u) << bias;
    ASSERT_EQ(written.size(), 1u);
    EXPECT_EQ(written[0], bias ? 4u : 3u);  // x, skip, gamma (and beta)
  }
}

}  // namespace
}  // namespace graphsub
