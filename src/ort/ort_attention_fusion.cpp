#include "ort/ort_attention_fusion.h"

#include <fmt/format.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/error.h"
#include "onnx/format/model_io.h"
#include "onnx/format/shape_inference.h"
#include "onnx/format/tensor_proto.h"

namespace graphsub {
namespace {

using onnx::NodeProto;

bool default_domain(const NodeProto& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

// A dimension as ONNX shape inference left it: a value, a symbol, or neither (unknown).
struct Dim {
  int64_t value = -1;
  std::string param;
};
using Dims = std::vector<Dim>;

// Shapes of every tensor shape inference could type, by name. Run in a child process
// (onnx/format/shape_inference.h): the model may hold opaque nodes copied from an untrusted file.
// Where inference gives up on the model (an operator of a domain it has no schemas for, say), only
// the declared inputs and outputs are typed, and ranks are propagated from them
// (fill_unknown_ranks).
std::map<std::string, Dims> inferred_shapes(const onnx::ModelProto& m, const std::string& label) {
  onnx::GraphProto types;
  try {
    types = infer_shapes_isolated(m, fmt::format("ONNX shape inference of {}", label), 120);
  } catch (const Error&) {
    types.Clear();
  }
  if (types.input_size() == 0 && types.output_size() == 0) {
    *types.mutable_input() = m.graph().input();
    *types.mutable_output() = m.graph().output();
  }
  std::map<std::string, Dims> shapes;
  auto add = [&](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    Dims dims;
    for (const auto& d : v.type().tensor_type().shape().dim())
      dims.push_back({d.has_dim_value() ? d.dim_value() : -1, d.dim_param()});
    shapes[v.name()] = std::move(dims);
  };
  for (const auto& v : types.input()) add(v);
  for (const auto& v : types.value_info()) add(v);
  for (const auto& v : types.output()) add(v);
  return shapes;
}

// Who writes and who reads each tensor of a written ONNX graph, and its constant
// initializers: this step edits the file graphsub wrote, after the IR is gone (the IR's
// index is opt/match/graph_index.h).
class WrittenModelIndex {
 public:
  explicit WrittenModelIndex(const onnx::GraphProto& g) {
    for (int i = 0; i < g.node_size(); ++i) {
      for (const auto& o : g.node(i).output()) producer_[o] = i;
      for (const auto& in : g.node(i).input()) ++readers_[in];
    }
    for (const auto& o : g.output()) ++readers_[o.name()];
    for (const auto& t : g.initializer()) init_[t.name()] = &t;
    graph_ = &g;
  }
  const NodeProto* producer(const std::string& t, const char* op_type) const {
    auto it = producer_.find(t);
    if (it == producer_.end()) return nullptr;
    const NodeProto& n = graph_->node(it->second);
    return default_domain(n) && n.op_type() == op_type ? &n : nullptr;
  }
  int producer_index(const std::string& t) const { return producer_.at(t); }
  // Readers of `t`: nodes (once per input slot) and graph outputs.
  int readers(const std::string& t) const {
    auto it = readers_.find(t);
    return it == readers_.end() ? 0 : it->second;
  }
  const NodeProto* only_reader(const std::string& t) const {
    if (readers(t) != 1) return nullptr;
    for (const auto& n : graph_->node())
      for (const auto& in : n.input())
        if (in == t) return &n;
    return nullptr;  // read by a graph output
  }
  const onnx::TensorProto* initializer(const std::string& t) const {
    auto it = init_.find(t);
    return it == init_.end() ? nullptr : it->second;
  }
  std::optional<std::vector<int64_t>> ints(const std::string& t) const {
    const onnx::TensorProto* c = initializer(t);
    if (!c || c->has_data_location()) return std::nullopt;
    if (c->data_type() != onnx::TensorProto::INT64 && c->data_type() != onnx::TensorProto::INT32)
      return std::nullopt;
    return tensor_ints(*c, t);
  }
  // The value of a float initializer with one element (a scalar or shape [1]).
  std::optional<float> scalar(const std::string& t) const {
    const onnx::TensorProto* c = initializer(t);
    if (!c || c->data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
    std::vector<float> v = tensor_floats(*c, t);
    if (v.size() != 1) return std::nullopt;
    return v[0];
  }

 private:
  const onnx::GraphProto* graph_ = nullptr;
  std::map<std::string, int> producer_;
  std::map<std::string, int> readers_;
  std::map<std::string, const onnx::TensorProto*> init_;
};

const onnx::AttributeProto* attribute(const NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// Ranks where shape inference lost the shape (ONNX 1.12 does not carry a computed shape,
// Shape -> Gather -> Concat -> Reshape, through; torch writes those for symbolic batches):
// propagated in node order through the operators a transformer layer is made of.
void fill_unknown_ranks(const onnx::GraphProto& g, std::map<std::string, Dims>& shapes) {
  static const std::set<std::string> same_rank = {
      "Relu", "Sqrt",    "Erf",      "Tanh", "Sigmoid",   "Exp",        "Log", "Neg",
      "Abs",  "Softmax", "Identity", "Cast", "Transpose", "Reciprocal", "Gelu"};
  static const std::set<std::string> broadcast = {"Add", "Sub", "Mul", "Div",
                                                  "Pow", "Max", "Min", "Where"};
  for (const auto& t : g.initializer())
    if (!shapes.count(t.name())) {
      Dims dims;
      for (int64_t d : t.dims()) dims.push_back({d, ""});
      shapes[t.name()] = std::move(dims);
    }
  auto rank = [&](const std::string& t) -> int64_t {
    auto it = shapes.find(t);
    return it == shapes.end() ? -1 : static_cast<int64_t>(it->second.size());
  };
  for (const NodeProto& n : g.node()) {
    if (n.output_size() == 0 || n.input_size() == 0 || shapes.count(n.output(0))) continue;
    const std::string& op = n.op_type();
    int64_t r = -1;
    if (same_rank.count(op)) {
      r = rank(n.input(0));
    } else if (broadcast.count(op) || op == "MatMul") {
      for (const auto& in : n.input()) {
        int64_t ri = rank(in);
        if (ri < 0) {
          r = -1;
          break;
        }
        r = std::max(r, ri);
      }
      if (op == "MatMul" && r < 2) r = -1;
    } else if (op.rfind("Reduce", 0) == 0) {
      const auto* keep = attribute(n, "keepdims");
      if (!keep || keep->i() != 0) r = rank(n.input(0));
    } else if (op == "Gemm") {
      r = 2;
    } else if (op == "Reshape" && n.input_size() == 2) {
      auto it = shapes.find(n.input(1));
      if (it != shapes.end() && it->second.size() == 1) r = it->second[0].value;
    }
    if (r >= 0) shapes[n.output(0)] = Dims(static_cast<size_t>(r));
  }
}

bool is_transpose(const NodeProto* n, std::vector<int64_t> perm) {
  if (!n || n->op_type() != "Transpose" || !default_domain(*n)) return false;
  const onnx::AttributeProto* p = attribute(*n, "perm");
  return p && std::vector<int64_t>(p->ints().begin(), p->ints().end()) == perm;
}

// One of Q, K, V: Transpose(Reshape(Slice(projection, [lo, hi) on the last axis), shape)).
struct Head {
  const NodeProto *transpose = nullptr, *reshape = nullptr, *slice = nullptr;
  std::vector<int64_t> shape;  // the Reshape's [seq, batch*heads, head]
  int64_t lo = 0, hi = 0;
};

std::optional<Head> match_head(const WrittenModelIndex& gi, const std::string& t,
                               const std::vector<int64_t>& perm) {
  Head h;
  h.transpose = gi.producer(t, "Transpose");
  if (!is_transpose(h.transpose, perm) || gi.readers(t) != 1) return std::nullopt;
  const std::string& reshaped = h.transpose->input(0);
  h.reshape = gi.producer(reshaped, "Reshape");
  if (!h.reshape || gi.readers(reshaped) != 1 || h.reshape->input_size() != 2) return std::nullopt;
  if (const auto* a = attribute(*h.reshape, "allowzero"); a && a->i() != 0) return std::nullopt;
  auto shape = gi.ints(h.reshape->input(1));
  if (!shape || shape->size() != 3) return std::nullopt;
  h.shape = *shape;
  const std::string& sliced = h.reshape->input(0);
  h.slice = gi.producer(sliced, "Slice");
  if (!h.slice || gi.readers(sliced) != 1 || h.slice->input_size() < 4) return std::nullopt;
  auto starts = gi.ints(h.slice->input(1)), ends = gi.ints(h.slice->input(2)),
       axes = gi.ints(h.slice->input(3));
  if (!starts || !ends || !axes || starts->size() != 1 || ends->size() != 1 || axes->size() != 1)
    return std::nullopt;
  if ((*axes)[0] != 2 && (*axes)[0] != -1) return std::nullopt;
  if (h.slice->input_size() > 4) {
    auto steps = gi.ints(h.slice->input(4));
    if (!steps || *steps != std::vector<int64_t>{1}) return std::nullopt;
  }
  h.lo = (*starts)[0];
  h.hi = (*ends)[0];
  return h;
}

struct Match {
  const NodeProto* out_transpose = nullptr;  // replaced by the fused node and its reshape
  std::set<const NodeProto*> removed;        // read by nothing once the output is rewired
  std::string x, weight, bias, shape_name;
  std::string skipped;  // output of x's Transpose from [batch, seq, E], read from before it
                        // ("" when there is none)
  int64_t heads = 0, head_size = 0;
  float scale = 1;
  std::string site;
};

std::optional<Match> match_attention(const WrittenModelIndex& gi,
                                     const std::map<std::string, Dims>& shapes,
                                     const NodeProto& softmax) {
  const onnx::AttributeProto* axis = attribute(softmax, "axis");
  if (axis && axis->i() != -1 && axis->i() != 2) return std::nullopt;
  Match m;
  const NodeProto* scores = gi.producer(softmax.input(0), "MatMul");
  if (!scores || gi.readers(softmax.input(0)) != 1) return std::nullopt;
  const NodeProto* context = gi.only_reader(softmax.output(0));
  if (!context || context->op_type() != "MatMul" || !default_domain(*context) ||
      context->input(0) != softmax.output(0))
    return std::nullopt;
  m.out_transpose = gi.only_reader(context->output(0));
  if (!is_transpose(m.out_transpose, {1, 0, 2})) return std::nullopt;

  // Q scaled by a constant: Div by c (scale 1/c) or Mul by c.
  const std::string& q_scaled = scores->input(0);
  const NodeProto* scaling = gi.producer(q_scaled, "Div");
  if (!scaling) scaling = gi.producer(q_scaled, "Mul");
  if (!scaling || gi.readers(q_scaled) != 1) return std::nullopt;
  std::string q;
  if (auto c = gi.scalar(scaling->input(1))) {
    q = scaling->input(0);
    m.scale = scaling->op_type() == "Div" ? 1 / *c : *c;
  } else if (auto c0 = gi.scalar(scaling->input(0)); c0 && scaling->op_type() == "Mul") {
    q = scaling->input(1);
    m.scale = *c0;
  } else {
    return std::nullopt;
  }
  auto hq = match_head(gi, q, {1, 0, 2});
  auto hk = match_head(gi, scores->input(1), {1, 2, 0});
  auto hv = match_head(gi, context->input(1), {1, 0, 2});
  if (!hq || !hk || !hv) return std::nullopt;
  const std::string& projected = hq->slice->input(0);
  if (hk->slice->input(0) != projected || hv->slice->input(0) != projected ||
      gi.readers(projected) != 3)
    return std::nullopt;

  // The projection: Add(MatMul(x, W [E, 3E]), bias [3E]), constants in float.
  const NodeProto* add = gi.producer(projected, "Add");
  if (!add) return std::nullopt;
  int bias_at = gi.initializer(add->input(0)) ? 0 : 1;
  m.bias = add->input(bias_at);
  const std::string& product = add->input(1 - bias_at);
  const NodeProto* matmul = gi.producer(product, "MatMul");
  if (!matmul || gi.readers(product) != 1) return std::nullopt;
  m.x = matmul->input(0);
  m.weight = matmul->input(1);
  const onnx::TensorProto *w = gi.initializer(m.weight), *b = gi.initializer(m.bias);
  if (!w || !b || w->data_type() != onnx::TensorProto::FLOAT ||
      b->data_type() != onnx::TensorProto::FLOAT || w->dims_size() != 2 || b->dims_size() != 1)
    return std::nullopt;
  int64_t e = w->dims(0);
  if (e <= 0 || w->dims(1) != 3 * e || b->dims(0) != 3 * e) return std::nullopt;
  if (hq->lo != 0 || hq->hi != e || hk->lo != e || hk->hi != 2 * e || hv->lo != 2 * e ||
      hv->hi < 3 * e)
    return std::nullopt;

  // x is [seq, batch, E] (so the last axis is the one sliced; its size, where inference lost
  // it behind symbolic reshapes, is E because x times W is valid); each head's reshape splits
  // E into [heads, head] and keeps seq first.
  auto xs = shapes.find(m.x);
  if (xs == shapes.end() || xs->second.size() != 3 ||
      (xs->second[2].value >= 0 && xs->second[2].value != e))
    return std::nullopt;
  const Dim &seq = xs->second[0], &batch = xs->second[1];
  const std::vector<int64_t>& r = hq->shape;
  if (hk->shape != r || hv->shape != r || r[2] <= 0 || e % r[2] != 0) return std::nullopt;
  m.head_size = r[2];
  m.heads = e / r[2];
  int64_t rows = batch.value >= 0 ? batch.value * m.heads : -2;
  bool seq_kept =
      r[0] == 0 || (seq.value >= 0 && r[0] == seq.value) || (r[0] == -1 && r[1] == rows);
  bool rows_kept = r[1] == -1 || r[1] == rows;
  if (!seq_kept || !rows_kept || (r[0] == -1 && r[1] == -1)) return std::nullopt;
  m.shape_name = hq->reshape->input(1);

  const NodeProto* x_transpose = gi.producer(m.x, "Transpose");
  if (is_transpose(x_transpose, {1, 0, 2})) {
    m.skipped = m.x;
    m.x = x_transpose->input(0);
  }
  m.removed = {scores,        context,       scaling,       add,
               matmul,        &softmax,      hq->transpose, hq->reshape,
               hq->slice,     hk->transpose, hk->reshape,   hk->slice,
               hv->transpose, hv->reshape,   hv->slice,     m.out_transpose};
  auto dim_text = [](const Dim& d) {
    return d.value >= 0 ? std::to_string(d.value) : d.param.empty() ? "?" : d.param;
  };
  m.site = fmt::format("Softmax '{}': {} heads of {}, sequence {}, batch {}", softmax.name(),
                       m.heads, m.head_size, dim_text(seq), dim_text(batch));
  return m;
}

NodeProto make_node(const std::string& op, std::vector<std::string> in, const std::string& out,
                    const std::string& name) {
  NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (auto& i : in) n.add_input(i);
  n.add_output(out);
  return n;
}

void add_ints(NodeProto& n, const char* name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// The nodes written in place of the match's output Transpose, in order: x to [batch, seq, E]
// (unless it is), Attention, back to [seq, batch, E], reshaped to what the Transpose wrote
// ([seq, batch*heads, head]: the same elements in the same order).
std::vector<NodeProto> fused_nodes(const Match& m) {
  const std::string& out = m.out_transpose->output(0);
  std::vector<NodeProto> nodes;
  std::string x = m.x;
  if (m.skipped.empty()) {
    nodes.push_back(make_node("Transpose", {m.x}, out + "_attention_input", out + "_to_batch"));
    add_ints(nodes.back(), "perm", {1, 0, 2});
    x = nodes.back().output(0);
  }
  NodeProto att =
      make_node("Attention", {x, m.weight, m.bias}, out + "_attention", out + "_Attention");
  att.set_domain("com.microsoft");
  auto* heads = att.add_attribute();
  heads->set_name("num_heads");
  heads->set_type(onnx::AttributeProto::INT);
  heads->set_i(m.heads);
  auto* scale = att.add_attribute();
  scale->set_name("scale");
  scale->set_type(onnx::AttributeProto::FLOAT);
  scale->set_f(m.scale);
  nodes.push_back(att);
  nodes.push_back(make_node("Transpose", {att.output(0)}, out + "_attention_seq", out + "_to_seq"));
  add_ints(nodes.back(), "perm", {1, 0, 2});
  nodes.push_back(
      make_node("Reshape", {nodes.back().output(0), m.shape_name}, out, out + "_heads"));
  return nodes;
}

}  // namespace

AttentionFusion fuse_ort_attention(const std::string& model_bytes, const std::string& label) {
  AttentionFusion result;
  onnx::ModelProto model = parse_model(model_bytes, label);
  int64_t opset = 0;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  // Softmax takes its axis as the last one only from opset 13 on.
  bool has_softmax = std::any_of(model.graph().node().begin(), model.graph().node().end(),
                                 [](const NodeProto& n) { return n.op_type() == "Softmax"; });
  if (opset < 13 || !has_softmax) {
    result.model_bytes = model_bytes;
    return result;
  }
  std::map<std::string, Dims> shapes = inferred_shapes(model, label);
  fill_unknown_ranks(model.graph(), shapes);
  WrittenModelIndex gi(model.graph());
  std::vector<Match> matches;
  std::set<const NodeProto*> taken;
  for (const NodeProto& n : model.graph().node()) {
    if (n.op_type() != "Softmax" || !default_domain(n)) continue;
    auto m = match_attention(gi, shapes, n);
    if (!m || std::any_of(m->removed.begin(), m->removed.end(),
                          [&](const NodeProto* p) { return taken.count(p); }))
      continue;
    taken.insert(m->removed.begin(), m->removed.end());
    result.sites.push_back(m->site);
    matches.push_back(std::move(*m));
  }
  if (matches.empty()) {
    result.model_bytes = model_bytes;
    return result;
  }
  // Rebuild the node list: each match's output Transpose becomes the fused nodes (there every
  // input of theirs is written already), the rest of its nodes go.
  std::map<const NodeProto*, const Match*> replaced;
  for (const Match& m : matches) replaced[m.out_transpose] = &m;
  google::protobuf::RepeatedPtrField<NodeProto> nodes;
  for (const NodeProto& n : model.graph().node()) {
    if (auto it = replaced.find(&n); it != replaced.end()) {
      for (NodeProto& f : fused_nodes(*it->second)) *nodes.Add() = std::move(f);
    } else if (!taken.count(&n)) {
      *nodes.Add() = n;
    }
  }
  // An input Transpose that the fused nodes read around and nothing else reads goes too.
  auto read_names = [&] {
    std::set<std::string> reads;
    for (const NodeProto& n : nodes) reads.insert(n.input().begin(), n.input().end());
    for (const auto& o : model.graph().output()) reads.insert(o.name());
    return reads;
  };
  std::set<std::string> reads = read_names(), skipped;
  for (const Match& m : matches)
    if (!m.skipped.empty() && !reads.count(m.skipped)) skipped.insert(m.skipped);
  nodes.erase(std::remove_if(nodes.begin(), nodes.end(),
                             [&](const NodeProto& n) {
                               return n.output_size() == 1 && skipped.count(n.output(0));
                             }),
              nodes.end());
  reads = read_names();
  onnx::GraphProto* g = model.mutable_graph();
  *g->mutable_node() = std::move(nodes);
  // Constants only the removed nodes read (slice bounds, scales, shapes) go with them.
  auto* inits = g->mutable_initializer();
  inits->erase(std::remove_if(inits->begin(), inits->end(),
                              [&](const onnx::TensorProto& t) { return !reads.count(t.name()); }),
               inits->end());
  auto* ms = model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  result.model_bytes = model.SerializeAsString();
  return result;
}

}  // namespace graphsub
