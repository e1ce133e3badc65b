#pragma once
// The compile-time context of the oneDNN executor. Lowering a node means: create its oneDNN
// primitive descriptors and primitives once, ask for its inputs in the layouts they need
// (layout conversions are inserted once and shared between consumers), and define its
// outputs. Steps whose inputs are all constants run immediately (weights are uploaded and
// reordered at compile time); the others are recorded and run on every execution.
#include <dnnl.hpp>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "exec_onednn/dnnl_util.h"
#include "ir/graph.h"

namespace graphsub::onednn {

// One unit of run-time work, owned by the graph node whose time it counts towards.
struct Step {
  NodeId owner = 0;
  dnnl::primitive prim;                  // a oneDNN primitive, or
  std::unordered_map<int, memory> args;  //   its arguments
  std::function<void()> host;            // host code (reference kernels)
  bool conversion = false;               // a layout conversion (reorder) of an operand
};

// The value of one tensor: the memory its producer wrote (any layout), whether it is known at
// compile time, and copies of it in other layouts made on request.
struct Value {
  memory mem;
  bool constant = false;
  std::vector<memory> converted;
};

class Lowering {
 public:
  Lowering(const Graph& g, dnnl::engine& eng, dnnl::stream& strm, bool fold_constants);

  // Sources: a run-time value the executor fills from feeds, or a constant with data.
  memory define_runtime_source(NodeId id);
  void define_constant_source(NodeId id, const std::vector<float>& data);

  // Node being lowered. begin() decides whether it folds (all inputs constant);
  // rollback() forgets everything it added, so another lowering can be tried.
  void begin(NodeId id);
  void rollback();
  void end();

  const Graph& graph() const { return g_; }
  NodeId id() const { return node_; }
  const Node& node() const { return g_.node(node_); }
  const Attrs& attrs() const { return node().attrs; }
  size_t num_inputs() const { return node().inputs.size(); }
  const TensorType& in_type(size_t i) const { return g_.type(node().inputs.at(i)); }
  const TensorType& out_type(size_t i) const { return node().outputs.at(i); }
  dnnl::engine& engine() { return eng_; }
  bool folding() const { return folding_; }

  // Input i as its producer wrote it.
  memory in_as_is(size_t i);
  bool in_constant(size_t i) const;
  // Input i in layout `want`. `want` may also have other dims of the same element count
  // (e.g. grouped conv weights [g,O/g,I,kh,kw] of an OIHW tensor): the row-major data is then
  // reinterpreted with those dims first.
  memory in(size_t i, const memory::desc& want);
  memory in_plain(size_t i) { return in(i, plain_desc(in_type(i).shape)); }
  // A view of plain memory `m` with another descriptor (same buffer, no copy), starting
  // `byte_offset` bytes into it.
  memory view(const memory& m, const memory::desc& md, size_t byte_offset = 0);

  // Whether the current node may write into `m`, which holds its input i (as is or converted):
  // true when every tensor whose memory shares bytes with `m` is a run-time value that no
  // graph output is and that no node reads after this one (its other readers are lowered
  // already, and this node reads it only as input i). Memory of a constant never qualifies.
  bool can_overwrite(size_t i, const memory& m) const;

  // Output i: newly allocated with layout md, or an existing memory (a zero-copy view).
  // A plain output that a later concat joins along a contiguous axis is written straight
  // into its place in that concat's buffer (see concat_in_place).
  memory out(size_t i, const memory::desc& md);
  void out_alias(size_t i, const memory& m);
  memory out_plain(size_t i) { return out(i, plain_desc(out_type(i).shape)); }

  // The current node is a concat whose inputs were all written in place into its buffer:
  // its output is that buffer, and nothing runs. Null when some input is elsewhere.
  memory concat_in_place();

  // Adds run-time work for the current node (or runs it now when the node folds).
  void primitive(dnnl::primitive p, std::unordered_map<int, memory> args);
  void host(std::function<void()> f);

  // Results.
  const Value& value(TensorRef r) const;
  // r in plain layout, converted once; conversion steps are owned by `owner`.
  memory plain_for_output(TensorRef r, NodeId owner);
  std::vector<Step>& steps() { return steps_; }
  // Every buffer allocated while lowering. Views hold raw pointers into these, so whoever
  // runs the steps must keep them alive.
  std::vector<memory>& buffers() { return buffers_; }

 private:
  memory convert(TensorRef r, const memory::desc& want, NodeId owner, bool constant);
  void add_step(Step s, bool run_now);
  memory allocate(const memory::desc& md);
  // Whether tensor r is dead once the current node has read it as input i (-1: not at all).
  bool dead_after_current(TensorRef r, int i) const;
  // Where tensor r is to be written inside a concat's buffer (a view), or null.
  memory placed(TensorRef r, const memory::desc& md);
  void plan_placements();

  // A tensor's place in the output of a concat that reads it: the concat and a byte offset.
  struct Place {
    NodeId concat = 0;
    size_t byte_offset = 0;
  };

  const Graph& g_;
  dnnl::engine& eng_;
  dnnl::stream& strm_;
  bool fold_;
  std::vector<std::vector<Value>> values_;  // [node][output]
  std::vector<Step> steps_;
  std::vector<memory> buffers_;
  std::map<TensorRef, Place> places_;
  std::map<NodeId, memory> concat_buffers_;  // allocated when the first part is placed

  // Current node and what it has added so far (for rollback).
  NodeId node_ = 0;
  bool folding_ = false;
  size_t steps_mark_ = 0;
  std::vector<std::pair<TensorRef, size_t>> converted_marks_;
};

}  // namespace graphsub::onednn
