#include "opt/transforms/builder.h"

namespace graphsub::opt {

Graph& ScratchGraph::begin(const Graph& parent, NodeId& first) {
  if (!g_ || g_->num_slots() > parent.num_slots() + 256) g_ = parent;
  first = static_cast<NodeId>(g_->num_slots());
  return *g_;
}

void ScratchGraph::clear_from(NodeId first) {
  for (NodeId id = first; id < g_->num_slots(); ++id)
    if (g_->alive(id)) g_->remove(id);
}

Builder::Builder(const Graph& parent, ScratchGraph& scratch, std::vector<Replacement>& reps)
    : parent_(&parent),
      scratch_(&scratch),
      first_(static_cast<NodeId>(parent.num_slots())),
      reps_(&reps) {
  reps.clear();
}

Builder::Builder(Rewrite& rw, std::vector<Replacement>& reps)
    : rw_(&rw), g_(&rw.graph()), first_(static_cast<NodeId>(g_->num_slots())), reps_(&reps) {
  reps.clear();
}

Builder::~Builder() {
  if (scratch_ && begun_) scratch_->clear_from(first_);
}

Graph& Builder::graph() {
  if (template_) throw Error("Builder: a described template cannot be added to");
  if (scratch_ && !begun_) g_ = &scratch_->begin(*parent_, first_);
  begun_ = true;
  return *g_;
}

Result<TensorRef> Builder::add(const OpDef& op, std::vector<TensorRef> inputs, Attrs attrs,
                               std::string name) {
  Graph& g = graph();
  return type_checked([&] {
    return TensorRef{g.add(op, std::move(inputs), std::move(attrs), std::move(name)), 0};
  });
}

Result<TensorRef> Builder::add(std::string_view op, std::vector<TensorRef> inputs, Attrs attrs,
                               std::string name) {
  Graph& g = graph();
  return type_checked([&] {
    return TensorRef{g.add(op, std::move(inputs), std::move(attrs), std::move(name)), 0};
  });
}

TensorRef Builder::add_weight(const std::string& base, TensorType type, std::vector<float> data) {
  Graph& g = graph();
  if (rw_) return rw_->add_weight(base, std::move(type), std::move(data));
  // A description: a weight costs nothing whatever its name and values, so neither is made.
  return {g.add_weight(base, std::move(type)), 0};
}

bool Builder::replay(const Template& t, const std::vector<TensorRef>& vars,
                     std::vector<TensorRef>& targets) {
  if (scratch_ && !begun_ && !template_) {
    // Described without adding: the nodes would take ids from the parent's table size on.
    template_ = &t;
    template_vars_ = &vars;
    targets.clear();
    for (auto& r : t.targets)
      targets.push_back(r.is_var ? vars[r.index] : TensorRef{first_ + r.index, r.output});
    return true;
  }
  if (rw_ && t.adds_sources) return false;
  t.replay(graph(), vars, targets);
  return true;
}

}  // namespace graphsub::opt
