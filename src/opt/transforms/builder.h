#pragma once
// Where a transform's applier writes the replacement for one match: the nodes it adds and
// which tensor of the matched graph each new tensor replaces. The search gives an applier one
// of two builders and the applier cannot tell which:
//   - a description: the nodes go to a scratch copy of the graph, or stay a recorded Template
//     that is never added anywhere; weights get no data. The search prices the description
//     (search/application_price.h) and builds only applications it admits.
//   - a build: the nodes go to a Rewrite of the graph, whose finish() makes the candidate.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "opt/transforms/result.h"
#include "opt/transforms/rewrite.h"
#include "opt/transforms/target_memo.h"

namespace graphsub::opt {

// A copy of a parent graph to add one application's nodes at a time to and price them.
class ScratchGraph {
 public:
  // The scratch graph, a copy of `parent` (made afresh when the holes that priced
  // applications leave behind add up; one ScratchGraph serves one parent); the application's
  // nodes take ids from `first` on.
  Graph& begin(const Graph& parent, NodeId& first);
  // Removes the nodes added since `first`.
  void clear_from(NodeId first);

 private:
  std::optional<Graph> g_;
};

class Builder {
 public:
  // A description on `scratch` (copied from `parent` only when the applier adds a node).
  // `reps` is the caller's buffer for the replacements (cleared; kept across applications so
  // that describing millions of them does not allocate).
  Builder(const Graph& parent, ScratchGraph& scratch, std::vector<Replacement>& reps);
  // A build into `rw`.
  Builder(Rewrite& rw, std::vector<Replacement>& reps);
  // A description's nodes are removed from the scratch graph.
  ~Builder();
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  // The graph to add nodes to: a copy of the matched graph (ids of the matched graph's tensors
  // are valid in it). Graph::add throws Error when a node does not type-check; add() below
  // returns that as a failed match instead.
  Graph& graph();
  Result<TensorRef> add(const OpDef& op, std::vector<TensorRef> inputs, Attrs attrs = {},
                        std::string name = {});
  Result<TensorRef> add(std::string_view op, std::vector<TensorRef> inputs, Attrs attrs = {},
                        std::string name = {});
  // A weight holding `data`, named after `base` but unique in the graph (a description's
  // weight has neither data nor a unique name: it costs nothing either way).
  TensorRef add_weight(const std::string& base, TensorType type, std::vector<float> data);
  // Adds a recorded template's nodes reading `vars` and writes its target tensors to
  // `targets`. False when they cannot be added exactly (a build of a template whose weights
  // were recorded without data): the applier then builds them as it did when recording.
  bool replay(const Template& t, const std::vector<TensorRef>& vars,
              std::vector<TensorRef>& targets);
  // Tensor `from` of the matched graph is to be replaced by `to`.
  void replace(TensorRef from, TensorRef to) { reps_->push_back({from, to}); }

  // What the search reads back.
  const std::vector<Replacement>& replacements() const { return *reps_; }
  // The id of the first node added; nodes [first(), graph().num_slots()) are the added ones.
  NodeId first() const { return first_; }
  // The graph nodes were added to; null when none were (a described template adds none).
  const Graph* added_graph() const { return begun_ ? g_ : nullptr; }
  // The template a description replayed without adding it, with its variables; null if none.
  const Template* described_template() const { return template_; }
  const std::vector<TensorRef>& template_vars() const { return *template_vars_; }

 private:
  const Graph* parent_ = nullptr;
  ScratchGraph* scratch_ = nullptr;  // a description
  Rewrite* rw_ = nullptr;            // a build
  Graph* g_ = nullptr;
  NodeId first_ = 0;
  bool begun_ = false;
  const Template* template_ = nullptr;
  const std::vector<TensorRef>* template_vars_ = nullptr;
  std::vector<Replacement>* reps_ = nullptr;
};

}  // namespace graphsub::opt
