#include "exec_onednn/lowering.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "ir/error.h"

namespace graphsub::onednn {

Lowering::Lowering(const Graph& g, dnnl::engine& eng, dnnl::stream& strm, bool fold_constants)
    : g_(g), eng_(eng), strm_(strm), fold_(fold_constants), values_(g.num_slots()) {}

memory Lowering::allocate(const memory::desc& md) {
  buffers_.emplace_back(md, eng_);
  return buffers_.back();
}

memory Lowering::define_runtime_source(NodeId id) {
  memory m = allocate(plain_desc(g_.node(id).outputs[0].shape));
  values_[id] = {Value{m, false, {}}};
  return m;
}

void Lowering::define_constant_source(NodeId id, const std::vector<float>& data) {
  memory m = allocate(plain_desc(g_.node(id).outputs[0].shape));
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

memory Lowering::view(const memory& m, const memory::desc& md) {
  return memory(md, eng_, m.get_data_handle());
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

memory Lowering::out(size_t i, const memory::desc& md) {
  memory m = allocate(md);
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
