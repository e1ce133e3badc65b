#include "gen/classify/candidates.h"

#include <algorithm>
#include <cmath>

#include "gen/enumerate/partitions.h"

namespace graphsub::gen {

RuleSide side_of(const Space& s, const CompactGraph& g) {
  return RuleSide{g, graph_outputs(s, g)};
}

std::vector<std::pair<size_t, size_t>> bucket_pairs(const std::vector<GraphRecord>& records,
                                                    const Bucket& b) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = b.begin; i < b.end; ++i)
    if (records[i].g.num_ops == 0) {
      for (size_t j = b.begin; j < b.end; ++j)
        if (j != i) out.emplace_back(i, j);
      return out;
    }
  // Graphs whose outputs all equal pool tensors pair with those tensors (split requests).
  if (records[b.begin].g.terminal) return out;
  for (size_t i = b.begin; i < b.end; ++i)
    for (size_t j = i + 1; j < b.end; ++j) out.emplace_back(i, j);
  return out;
}

Candidate alias_candidate(const Space& s, const Alias& a) {
  auto single = [&](uint32_t v) {
    CompactGraph g;
    g.num_ops = 1;
    g.ops[0].variant = static_cast<uint16_t>(v);
    for (int i = 0; i < s.variants[v].arity; ++i)
      g.ops[0].in[static_cast<size_t>(i)] = a.example[static_cast<size_t>(i)];
    return side_of(s, g);
  };
  return Candidate{single(a.variant), single(a.same_as), {}, {}};
}

namespace {

// Appends `piece` to `into`, renumbering its operator outputs after `into`'s operators.
bool append_piece(const Space& s, RuleSide& into, const CompactGraph& piece) {
  size_t p = s.num_pool();
  int base = into.g.num_ops;
  if (base + piece.num_ops > s.max_ops) return false;
  auto remap = [&](TensorId t) -> TensorId {
    if (t == kNoTensor || is_pool_id(p, t)) return t;
    return op_output_id(p, base + producer_of(p, t), output_index_of(p, t));
  };
  for (int k = 0; k < piece.num_ops; ++k) {
    GraphOp op = piece.ops[k];
    for (auto& t : op.in) t = remap(t);
    into.g.ops[static_cast<size_t>(base + k)] = op;
  }
  into.g.num_ops = static_cast<uint8_t>(base + piece.num_ops);
  for (TensorId t : graph_outputs(s, piece)) into.outputs.push_back(remap(t));
  return true;
}

}  // namespace

std::optional<RuleSide> split_partner(GraphEvaluator& ev, const Space& s, const SmallGraphs& small,
                                      const SplitRequest& q) {
  EvaluatedGraph e = ev.evaluate(q.g, false);
  if (!e.ok) return std::nullopt;
  size_t n = e.outputs.size();
  uint8_t blocks =
      *std::max_element(q.blocks.begin(), q.blocks.begin() + static_cast<std::ptrdiff_t>(n));
  RuleSide partner;
  for (uint8_t b = 0; b <= blocks; ++b) {
    std::vector<uint64_t> h;
    for (size_t i = 0; i < n; ++i)
      if (q.blocks[i] == b) h.push_back(e.output_hashes[i]);
    std::optional<CompactGraph> piece = small.smallest_with(combine_output_hashes(h));
    if (!piece || !append_piece(s, partner, *piece)) return std::nullopt;
  }
  EvaluatedGraph pe = evaluate_side(ev, s, partner, false);
  std::vector<uint64_t> hs = pe.all_hashes;
  std::sort(hs.begin(), hs.end());
  if (!pe.ok || std::adjacent_find(hs.begin(), hs.end()) != hs.end()) return std::nullopt;
  return partner;
}

EvaluatedGraph evaluate_side(GraphEvaluator& ev, const Space& s, const RuleSide& side,
                             bool with_float, bool exact) {
  EvaluatedGraph e = ev.evaluate(side.g, with_float, exact);
  if (!e.ok || e.outputs == side.outputs) return e;
  // Outputs named explicitly (an assembled side): re-read them from the evaluation.
  EvaluatedGraph r;
  r.ok = true;
  r.all_hashes = e.all_hashes;
  r.outputs = side.outputs;
  size_t p = s.num_pool();
  for (TensorId t : side.outputs) {
    if (is_pool_id(p, t)) {
      r.output_hashes.push_back(exact ? ev.pool_hash(t) : 0);
      if (with_float) r.output_f32.push_back(ev.pool_f32(t));
      continue;
    }
    auto it = std::find(e.outputs.begin(), e.outputs.end(), t);
    if (it == e.outputs.end()) return EvaluatedGraph{};  // an output read inside the side
    size_t i = static_cast<size_t>(it - e.outputs.begin());
    r.output_hashes.push_back(e.output_hashes[i]);
    if (with_float) r.output_f32.push_back(e.output_f32[i]);
  }
  return r;
}

bool float_retest(GraphEvaluator& ev, GraphEvaluator& alt, const Space& s, Candidate& c,
                  double tolerance) {
  return float_retest(evaluate_side(ev, s, c.a, false), evaluate_side(ev, s, c.b, false),
                      evaluate_side(alt, s, c.a, true, false),
                      evaluate_side(alt, s, c.b, true, false), c, tolerance);
}

bool float_retest(const EvaluatedGraph& ea, const EvaluatedGraph& eb, const EvaluatedGraph& fa,
                  const EvaluatedGraph& fb, Candidate& c, double tolerance) {
  if (!ea.ok || !eb.ok || ea.outputs.size() != eb.outputs.size()) return false;
  // Both sides must also apply on the re-test shapes (else the pair holds by a coincidence
  // of the fingerprint shapes).
  if (!fa.ok || !fb.ok || fa.output_f32.size() != ea.outputs.size() ||
      fb.output_f32.size() != eb.outputs.size())
    return false;
  c.a_out.clear();
  c.b_out.clear();
  std::vector<bool> used(eb.outputs.size(), false);
  for (size_t i = 0; i < ea.outputs.size(); ++i) {
    size_t j = 0;
    while (j < eb.outputs.size() && (used[j] || eb.output_hashes[j] != ea.output_hashes[i])) ++j;
    if (j == eb.outputs.size()) return false;
    used[j] = true;
    const auto& x = fa.output_f32[i];
    const auto& y = fb.output_f32[j];
    if (x.size() != y.size()) return false;
    for (size_t k = 0; k < x.size(); ++k) {
      double scale = std::max({1.0, std::fabs(double{x[k]}), std::fabs(double{y[k]})});
      if (!(std::fabs(double{x[k]} - double{y[k]}) <= tolerance * scale)) return false;
    }
    c.a_out.push_back(ea.outputs[i]);
    c.b_out.push_back(eb.outputs[j]);
  }
  return true;
}

}  // namespace graphsub::gen
