#include "opt/transforms/canonical_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "core/error.h"
#include "ops/op_def.h"

namespace graphsub::opt {
namespace {

// Past these the index check would cost more than the chain is worth, and permutations of
// higher rank are not worth writing.
constexpr int64_t kMaxCheckedElements = int64_t{1} << 22;  // also below uint32's range
constexpr size_t kMaxCanonicalRank = 6;

bool is_view(const Node& n) {
  return !n.is_source() && (n.op->name == "reshape" || n.op->name == "transpose");
}

std::vector<int64_t> transpose_perm(const Graph& g, const Node& n) {
  std::vector<int64_t> perm = n.attrs.ints("perm");
  if (perm.empty())
    for (int64_t i = g.type(n.inputs[0]).rank() - 1; i >= 0; --i) perm.push_back(i);
  return perm;
}

// Whether the rule language reads the node (a reshape that merges two axes or splits one, a
// transpose of two axes or a permutation of more).
bool in_language(const Graph& g, const Node& n) {
  if (!n.op->attrs_to_params) return true;
  const TensorType in = g.type(n.inputs[0]);
  return n.op->attrs_to_params(n.attrs, std::span<const TensorType>(&in, 1)).has_value();
}

// One step of a chain, as the canonical form is built from: a reshape to `shape` or a
// transpose by `perm`.
struct View {
  bool transpose = false;
  std::vector<int64_t> v;  // perm, or the target shape
};

// Where each element of a tensor of shape `in` lands after the views: the flat source index of
// each output element, moved by the transpose operator's own kernel (exact on uint32 indices).
std::vector<uint32_t> apply_views(const Shape& in, const std::vector<View>& views) {
  const OpDef& transpose = op_def("transpose");
  std::vector<uint32_t> data(static_cast<size_t>(numel(in)));
  std::iota(data.begin(), data.end(), 0u);
  TensorType t{.shape = in};
  for (const View& v : views) {
    if (!v.transpose) {
      t.shape = v.v;
      continue;
    }
    Attrs a;
    a.set("perm", v.v);
    std::vector<TensorType> out = transpose.infer(a, std::span<const TensorType>(&t, 1));
    std::vector<uint32_t> next(data.size());
    const uint32_t* in_ptr = data.data();
    uint32_t* out_ptr = next.data();
    transpose.kernel_u32({a, std::span<const TensorType>(&t, 1), out,
                          std::span<const uint32_t* const>(&in_ptr, 1),
                          std::span<uint32_t* const>(&out_ptr, 1)});
    data = std::move(next);
    t.shape = out[0].shape;
  }
  return data;
}

// The factors of a chain's data: each is a run of one input axis (after the splits the chain's
// reshapes imply), or an axis of size 1.
struct Factor {
  int64_t size = 1;
  bool one = false;      // an axis of size 1
  bool created = false;  // one that a reshape added beyond those dropped before it
};

class ChainFactors {
 public:
  explicit ChainFactors(const Shape& in) {
    for (int64_t d : in) {
      int f = add(d, d == 1);
      axes_.push_back({f});
      input_.push_back(f);
    }
  }

  bool transpose(const std::vector<int64_t>& perm) {
    std::vector<std::vector<int>> next;
    for (int64_t p : perm) next.push_back(axes_[static_cast<size_t>(p)]);
    axes_ = std::move(next);
    return true;
  }

  // Regroups the factors, in the data's order, into axes of `shape`, splitting a factor where an
  // axis ends inside it. False where a reshape does not follow factor boundaries (a factor whose
  // size the axis does not divide).
  bool reshape(const Shape& shape) {
    std::vector<int> flat, ones;
    std::vector<int> follows;  // per axis of size 1: how many factors came before it
    for (const auto& a : axes_)
      for (int f : a) {
        if (factors_[f].one) {
          ones.push_back(f);
          follows.push_back(static_cast<int>(flat.size()));
        } else {
          flat.push_back(f);
        }
      }
    std::vector<std::vector<int>> out(shape.size());
    // Where the pieces of each factor went: (axis, factor) of its first and of its last.
    std::vector<std::pair<size_t, int>> first_of(flat.size()), last_of(flat.size());
    std::vector<bool> started(flat.size(), false);
    size_t next = 0, next_one = 0;
    for (size_t k = 0; k < shape.size(); ++k) {
      if (shape[k] == 1) {
        out[k] = {next_one < ones.size() ? ones[next_one++] : add(1, true, true)};
        continue;
      }
      int64_t have = 1;
      while (have < shape[k]) {
        if (next == flat.size() || shape[k] % have != 0) return false;
        int f = flat[next];
        int64_t want = shape[k] / have;
        int piece = f;
        if (factors_[f].size > want) {
          if (factors_[f].size % want != 0) return false;
          auto [first, rest] = refine(f, want);
          flat[next] = rest;
          piece = first;
        }
        if (!started[next]) first_of[next] = {k, piece};
        started[next] = true;
        last_of[next] = {k, piece};
        out[k].push_back(piece);
        have *= factors_[piece].size;
        if (piece == f) ++next;
      }
      if (have != shape[k]) return false;
    }
    if (next != flat.size()) return false;
    // The dropped axes of size 1 go after the factor they followed (before the first one when
    // none came before them).
    for (size_t i = next_one; i < ones.size(); ++i) {
      int f = ones[i];
      if (flat.empty()) {
        if (out.empty()) return false;
        out[0].push_back(f);
        continue;
      }
      bool after = follows[i] > 0;
      auto [axis, piece] = after ? last_of[static_cast<size_t>(follows[i]) - 1] : first_of[0];
      auto& a = out[axis];
      auto it = std::find(a.begin(), a.end(), piece);
      a.insert(after ? it + 1 : it, f);
    }
    axes_ = std::move(out);
    return true;
  }

  // The canonical views: splits of the input into its factors, one permutation, merges, and
  // the axes of size 1 the chain adds. nullopt where the form is no better (rank too high).
  std::optional<std::vector<View>> canonical(const Shape& in) const {
    std::vector<int> leaves;  // the input's factors, in order, each axis split
    std::vector<View> views;
    Shape s = in;
    for (size_t a = 0; a < input_.size(); ++a) {
      size_t at = leaves.size();
      std::vector<int> parts = leaves_of(input_[a]);
      for (size_t j = 0; j + 1 < parts.size(); ++j) {
        s[at + j] /= factors_[parts[j]].size;
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(at + j), factors_[parts[j]].size);
        views.push_back({false, s});
      }
      leaves.insert(leaves.end(), parts.begin(), parts.end());
    }
    if (leaves.size() > kMaxCanonicalRank) return std::nullopt;
    std::vector<int64_t> perm;
    std::vector<size_t> group_sizes;
    for (const auto& a : axes_) {
      size_t n = 0;
      for (int f : a) {
        if (factors_[f].created) continue;
        perm.push_back(std::find(leaves.begin(), leaves.end(), f) - leaves.begin());
        ++n;
      }
      group_sizes.push_back(n);
    }
    if (perm.size() != leaves.size()) return std::nullopt;
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i)
      identity = identity && perm[i] == static_cast<int64_t>(i);
    if (!identity) {
      Shape t;
      for (int64_t p : perm) t.push_back(s[static_cast<size_t>(p)]);
      s = t;
      views.push_back({true, perm});
    }
    // Merges from the last group back, so that the earlier groups keep their positions.
    std::vector<size_t> starts(group_sizes.size(), 0);
    for (size_t k = 1; k < group_sizes.size(); ++k) starts[k] = starts[k - 1] + group_sizes[k - 1];
    for (size_t k = group_sizes.size(); k-- > 0;)
      for (size_t m = 1; m < group_sizes[k]; ++m) {
        size_t q = starts[k];
        s[q] *= s[q + 1];
        s.erase(s.begin() + static_cast<std::ptrdiff_t>(q) + 1);
        views.push_back({false, s});
      }
    // Axes of size 1 a reshape added, in place, left to right.
    for (size_t k = 0; k < axes_.size(); ++k)
      if (group_sizes[k] == 0) {
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(k), 1);
        views.push_back({false, s});
      }
    return views;
  }

 private:
  int add(int64_t size, bool one, bool created = false) {
    factors_.push_back({size, one, created});
    children_.push_back({});
    return static_cast<int>(factors_.size()) - 1;
  }
  std::pair<int, int> refine(int f, int64_t first) {
    int a = add(first, false), b = add(factors_[f].size / first, false);
    children_[f] = {a, b};
    for (auto& axis : axes_)
      for (size_t i = 0; i < axis.size(); ++i)
        if (axis[i] == f) {
          axis[i] = b;
          axis.insert(axis.begin() + static_cast<std::ptrdiff_t>(i), a);
          break;
        }
    return {a, b};
  }
  std::vector<int> leaves_of(int f) const {
    if (children_[f].empty()) return {f};
    std::vector<int> out;
    for (int c : children_[f])
      for (int l : leaves_of(c)) out.push_back(l);
    return out;
  }

  std::vector<Factor> factors_;
  std::vector<std::vector<int>> children_;
  std::vector<std::vector<int>> axes_;
  std::vector<int> input_;
};

struct Chain {
  std::vector<NodeId> nodes;
};

// The chains of g: maximal runs of reshapes and transposes, each output but the last read by
// the next node only (and no graph output).
std::vector<Chain> find_chains(const Graph& g) {
  auto readers = g.consumers();
  std::set<NodeId> outputs;
  for (const auto& o : g.outputs()) outputs.insert(o.ref.node);
  auto sole_view_reader = [&](NodeId id) -> std::optional<NodeId> {
    if (outputs.count(id) || readers[id].size() != 1) return std::nullopt;
    NodeId r = readers[id][0];
    return is_view(g.node(r)) ? std::optional<NodeId>(r) : std::nullopt;
  };
  std::vector<Chain> chains;
  for (NodeId id : g.topo_order()) {
    if (!is_view(g.node(id))) continue;
    NodeId src = g.node(id).inputs[0].node;
    if (is_view(g.node(src)) && sole_view_reader(src) == id) continue;  // not the chain's start
    Chain c{{id}};
    while (auto next = sole_view_reader(c.nodes.back())) c.nodes.push_back(*next);
    chains.push_back(std::move(c));
  }
  return chains;
}

// The canonical views of a chain, where it holds a transpose and a reshape outside the
// language and its canonical form is in it; nullopt otherwise.
std::optional<std::vector<View>> canonical_views(const Graph& g, const Chain& c) {
  bool transposes = false, outside = false;
  std::vector<View> views;
  for (NodeId id : c.nodes) {
    const Node& n = g.node(id);
    bool t = n.op->name == "transpose";
    transposes = transposes || t;
    outside = outside || !in_language(g, n);
    views.push_back({t, t ? transpose_perm(g, n) : n.outputs[0].shape});
  }
  if (!transposes || !outside) return std::nullopt;
  const Shape& in = g.type(g.node(c.nodes.front()).inputs[0]).shape;
  if (numel(in) <= 0 || numel(in) > kMaxCheckedElements) return std::nullopt;
  ChainFactors f(in);
  for (const View& v : views)
    if (!(v.transpose ? f.transpose(v.v) : f.reshape(v.v))) return std::nullopt;
  auto canon = f.canonical(in);
  if (!canon || canon->size() > c.nodes.size() + 2) return std::nullopt;
  // The same elements in the same places, or nothing is rewritten.
  if (apply_views(in, *canon) != apply_views(in, views)) return std::nullopt;
  return canon;
}

}  // namespace

size_t canonicalize_views(Graph& g) {
  size_t rewritten = 0;
  for (const Chain& c : find_chains(g)) {
    auto views = canonical_views(g, c);
    if (!views) continue;
    std::vector<NodeId> added;
    TensorRef x = g.node(c.nodes.front()).inputs[0];
    const std::string base = g.node(c.nodes.front()).name;
    bool readable = true;
    for (size_t k = 0; k < views->size() && readable; ++k) {
      const View& v = (*views)[k];
      Attrs a;
      a.set(v.transpose ? "perm" : "shape", v.v);
      NodeId id =
          g.add(v.transpose ? "transpose" : "reshape", {x}, a, fmt::format("{}_view{}", base, k));
      added.push_back(id);
      readable = in_language(g, g.node(id));
      x = {id, 0};
    }
    if (!readable) {
      for (NodeId id : added) g.remove(id);
      continue;
    }
    g.replace_uses({c.nodes.back(), 0}, x);
    ++rewritten;
  }
  if (rewritten) g.remove_dead();
  return rewritten;
}

size_t collapse_reshapes(Graph& g) {
  size_t before = g.num_ops();
  // One pair at a time, readers and outputs taken afresh: each join adds a node.
  for (bool joined = true; joined;) {
    joined = false;
    auto readers = g.consumers();
    std::set<NodeId> outputs;
    for (const auto& o : g.outputs()) outputs.insert(o.ref.node);
    for (NodeId id : g.topo_order()) {
      const Node& n = g.node(id);
      if (n.is_source() || n.op->name != "reshape") continue;
      NodeId src = n.inputs[0].node;
      const Node& p = g.node(src);
      if (p.is_source() || p.op->name != "reshape" || outputs.count(src) ||
          readers[src].size() != 1)
        continue;
      // One reshape from the first one's input (the first is left to the dead nodes); none
      // where that keeps the input's shape, unless it is a graph output.
      TensorRef x = p.inputs[0];
      const Shape shape = n.outputs[0].shape;
      if (!outputs.count(id) && g.type(x).shape == shape) {
        g.replace_uses({id, 0}, x);
      } else {
        Attrs a;
        a.set("shape", std::vector<int64_t>(shape.begin(), shape.end()));
        std::string name = n.name;
        NodeId one = g.add("reshape", {x}, a, name);
        g.replace_uses({id, 0}, {one, 0});
      }
      g.remove_dead();
      joined = true;
      break;
    }
  }
  return before - g.num_ops();
}

}  // namespace graphsub::opt
