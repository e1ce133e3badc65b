#include "exec_onednn/lowering.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "ops/kernel_util.h"

namespace graphsub::onednn {

Lowering::Lowering(const Graph& g, dnnl::engine& eng, dnnl::stream& strm, bool fold_constants)
    : g_(g), eng_(eng), strm_(strm), fold_(fold_constants), values_(g.num_slots()) {
  plan_placements();
}

// A concat along an axis whose outer dimensions are all 1 joins its inputs as consecutive
// byte ranges of its output. Each input can then be written there by its producer, and the
// concat costs nothing at run time. A tensor is placed in at most one concat (the first in
// topological order); a concat reading one tensor twice, or an empty one, copies as usual.
void Lowering::plan_placements() {
  for (NodeId id : g_.topo_order()) {
    const Node& n = g_.node(id);
    if (n.op->name != "concat" || n.inputs.empty()) continue;
    const Shape& out = n.outputs.at(0).shape;
    if (out.empty() || numel(out) == 0) continue;
    int64_t rank = static_cast<int64_t>(out.size());
    size_t axis = static_cast<size_t>(norm_axis("concat", n.attrs.i("axis"), rank));
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= out[d];
    for (size_t d = axis + 1; d < out.size(); ++d) inner *= out[d];
    if (outer != 1) continue;
    std::vector<TensorRef> seen;
    bool ok = true;
    for (auto r : n.inputs) {
      if (places_.count(r) || std::find(seen.begin(), seen.end(), r) != seen.end() ||
          g_.type(r).numel() == 0 || g_.type(r).shape.size() != out.size())
        ok = false;
      seen.push_back(r);
    }
    if (!ok) continue;
    size_t offset = 0;
    for (auto r : n.inputs) {
      places_[r] = Place{id, offset};
      offset += static_cast<size_t>(g_.type(r).shape[axis] * inner) * sizeof(float);
    }
  }
}

memory Lowering::placed(TensorRef r, const memory::desc& md) {
  auto it = places_.find(r);
  if (it == places_.end() || md != plain_desc(g_.type(r).shape)) return {};
  memory& buf = concat_buffers_[it->second.concat];
  if (!buf) buf = allocate(plain_desc(g_.node(it->second.concat).outputs.at(0).shape));
  return view(buf, md, it->second.byte_offset);
}

memory Lowering::concat_in_place() {
  auto buf = concat_buffers_.find(node_);
  if (buf == concat_buffers_.end()) return {};
  auto* base = static_cast<char*>(buf->second.get_data_handle());
  for (auto r : node().inputs) {
    auto p = places_.find(r);
    if (p == places_.end() || p->second.concat != node_) return {};
    const memory& m = value(r).mem;
    if (m.get_data_handle() != base + p->second.byte_offset ||
        m.get_desc() != plain_desc(g_.type(r).shape))
      return {};
  }
  return buf->second;
}

memory Lowering::allocate(const memory::desc& md) {
  buffers_.emplace_back(md, eng_);
  return buffers_.back();
}

memory Lowering::define_runtime_source(NodeId id) {
  memory::desc md = plain_desc(g_.node(id).outputs[0].shape);
  memory m = placed({id, 0}, md);
  if (!m) m = allocate(md);
  values_[id] = {Value{m, false, {}}};
  return m;
}

void Lowering::define_constant_source(NodeId id, const std::vector<float>& data) {
  memory::desc md = plain_desc(g_.node(id).outputs[0].shape);
  memory m = placed({id, 0}, md);
  if (!m) m = allocate(md);
  std::memcpy(m.get_data_handle(), data.data(), data.size() * sizeof(float));
  values_[id] = {Value{m, true, {}}};
}

void Lowering::begin(NodeId id) {
  node_ = id;
  const Node& n = g_.node(id);
  folding_ = fold_ && std::all_of(n.inputs.begin(), n.inputs.end(),
                                  [&](TensorRef r) { return value(r).constant; });
  steps_mark_ = steps_.size();
  converted_marks_.clear();
  for (auto r : n.inputs) converted_marks_.push_back({r, value(r).converted.size()});
  values_[id].assign(n.outputs.size(), Value{});
}

void Lowering::rollback() {
  steps_.resize(steps_mark_);
  for (auto& [r, size] : converted_marks_) values_[r.node][r.output].converted.resize(size);
  values_[node_].assign(node().outputs.size(), Value{});
}

void Lowering::end() {
  for (size_t i = 0; i < values_[node_].size(); ++i)
    if (!values_[node_][i].mem)
      throw Error(
          fmt::format("{}: oneDNN lowering left output {} undefined", g_.describe(node_), i));
}

const Value& Lowering::value(TensorRef r) const {
  const auto& v = values_.at(r.node);
  if (r.output >= v.size() || !v[r.output].mem)
    throw Error(fmt::format("oneDNN executor: tensor {}:{} has no value yet", r.node, r.output));
  return v[r.output];
}

memory Lowering::in_as_is(size_t i) {
  return value(node().inputs.at(i)).mem;
}

bool Lowering::in_constant(size_t i) const {
  return value(node().inputs.at(i)).constant;
}

memory Lowering::in(size_t i, const memory::desc& want) {
  TensorRef r = node().inputs.at(i);
  return convert(r, want, node_, value(r).constant);
}

memory Lowering::view(const memory& m, const memory::desc& md, size_t byte_offset) {
  return memory(md, eng_, static_cast<char*>(m.get_data_handle()) + byte_offset);
}

memory Lowering::convert(TensorRef r, const memory::desc& want, NodeId owner, bool constant) {
  Value& v = values_[r.node][r.output];
  if (v.mem.get_desc() == want) return v.mem;
  for (auto& c : v.converted)
    if (c.get_desc() == want) return c;
  memory src = v.mem;
  if (want.dims() != v.mem.get_desc().dims()) {
    // Reinterpret the row-major data with other dims of the same element count.
    memory::desc src_plain = plain_desc(v.mem.get_desc().dims());
    memory p = v.mem.get_desc() == src_plain ? v.mem : convert(r, src_plain, owner, constant);
    memory::desc reshaped = plain_desc(want.dims());
    if (reshaped.get_size() != src_plain.get_size())
      throw Error(fmt::format("{}: cannot view a tensor of {} bytes as one of {} bytes",
                              g_.describe(owner), src_plain.get_size(), reshaped.get_size()));
    src = view(p, reshaped);
    if (reshaped == want) {
      v.converted.push_back(src);
      return src;
    }
  }
  memory dst = allocate(want);
  Step s;
  s.owner = owner;
  s.prim = dnnl::reorder(src, dst);
  s.args = {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}};
  s.conversion = true;
  add_step(std::move(s), constant);
  v.converted.push_back(dst);
  return dst;
}

namespace {

bool overlaps(const memory& a, const char* begin, const char* end) {
  if (!a) return false;
  const auto* p = static_cast<const char*>(a.get_data_handle());
  return p && p < end && begin < p + a.get_desc().get_size();
}

}  // namespace

bool Lowering::dead_after_current(TensorRef r, int i) const {
  if (value(r).constant) return false;
  for (auto& o : g_.outputs())
    if (o.ref == r) return false;
  for (NodeId c = 0; c < g_.num_slots(); ++c) {
    if (!g_.alive(c)) continue;
    const auto& in = g_.node(c).inputs;
    for (size_t k = 0; k < in.size(); ++k) {
      if (in[k] != r) continue;
      if (c == node_ ? static_cast<int>(k) != i : values_[c].empty()) return false;
    }
  }
  return true;
}

bool Lowering::can_overwrite(size_t i, const memory& m) const {
  if (folding_ || !m) return false;
  const auto* begin = static_cast<const char*>(m.get_data_handle());
  const char* end = begin + m.get_desc().get_size();
  TensorRef input = node().inputs.at(i);
  for (NodeId id = 0; id < values_.size(); ++id)
    for (uint32_t k = 0; k < values_[id].size(); ++k) {
      const Value& v = values_[id][k];
      bool shared = overlaps(v.mem, begin, end);
      for (auto& c : v.converted) shared = shared || overlaps(c, begin, end);
      TensorRef r{id, k};
      if (shared && !dead_after_current(r, r == input ? static_cast<int>(i) : -1)) return false;
    }
  return true;
}

memory Lowering::out(size_t i, const memory::desc& md) {
  memory m = placed({node_, static_cast<uint32_t>(i)}, md);
  if (!m) m = allocate(md);
  out_alias(i, m);
  return m;
}

void Lowering::out_alias(size_t i, const memory& m) {
  auto& outs = values_[node_];
  if (i >= outs.size())
    throw Error(fmt::format("{}: output {} out of range", g_.describe(node_), i));
  outs[i] = Value{m, folding_, {}};
}

void Lowering::add_step(Step s, bool run_now) {
  if (!run_now) {
    steps_.push_back(std::move(s));
    return;
  }
  if (s.prim) {
    s.prim.execute(strm_, s.args);
    strm_.wait();
  } else {
    s.host();
  }
}

void Lowering::primitive(dnnl::primitive p, std::unordered_map<int, memory> args) {
  Step s;
  s.owner = node_;
  s.prim = std::move(p);
  s.args = std::move(args);
  add_step(std::move(s), folding_);
}

void Lowering::host(std::function<void()> f) {
  Step s;
  s.owner = node_;
  s.host = std::move(f);
  add_step(std::move(s), folding_);
}

memory Lowering::plain_for_output(TensorRef r, NodeId owner) {
  const Value& v = value(r);
  return convert(r, plain_desc(g_.type(r).shape), owner, v.constant);
}

}  // namespace graphsub::onednn
