// The exporter's driver: folds weight-only subgraphs, names tensors, writes nodes, weights,
// inputs and outputs, and runs onnx::checker on the result.
#include <fmt/format.h>
#include <onnx/checker.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <variant>

#include "core/error.h"
#include "exec/precompute.h"
#include "onnx/export/export_context.h"
#include "onnx/format/half_precision.h"
#include "onnx/format/model_io.h"
#include "onnx/format/opaque_attrs.h"
#include "onnx/format/tensor_proto.h"

namespace graphsub {

// ---- ExportContext ----

bool ExportContext::is_read(TensorRef r) {
  if (!read) {
    read.emplace();
    for (NodeId id = 0; id < g.num_slots(); ++id)
      if (g.alive(id))
        for (TensorRef in : g.node(id).inputs) read->insert(in);
    for (const auto& o : g.outputs()) read->insert(o.ref);
  }
  return read->count(r) > 0;
}

std::string ExportContext::fresh(const std::string& base) {
  std::string name = base.empty() ? "t" : base;
  for (int k = 1; used.count(name); ++k) name = fmt::format("{}_{}", base, k);
  used.insert(name);
  return name;
}

const std::string& ExportContext::name(TensorRef r) const {
  auto it = names.find(r);
  if (it == names.end())
    throw Error(
        fmt::format("export: output {} of {} has no name yet", r.output, g.describe(r.node)));
  return it->second;
}

onnx::NodeProto& ExportContext::node(const std::string& op_type, std::vector<std::string> inputs,
                                     std::vector<std::string> outputs,
                                     const std::string& node_name) {
  onnx::NodeProto& n = *gp.add_node();
  n.set_op_type(op_type);
  n.set_name(fresh(node_name));
  for (auto& s : inputs) n.add_input(std::move(s));
  for (auto& s : outputs) n.add_output(std::move(s));
  return n;
}

std::string ExportContext::int64_const(const std::string& base, const std::vector<int64_t>& v,
                                       std::optional<Shape> shape) {
  std::string name = fresh(base);
  *gp.add_initializer() =
      make_int64_tensor(name, shape ? *shape : Shape{static_cast<int64_t>(v.size())}, v);
  return name;
}

std::string ExportContext::int32_const(const std::string& base, const std::vector<int64_t>& v,
                                       const Shape& shape) {
  std::string name = fresh(base);
  *gp.add_initializer() = make_int32_tensor(name, shape, v);
  return name;
}

std::string ExportContext::float_const(const std::string& base, float value) {
  std::string name = fresh(base);
  *gp.add_initializer() = make_float_scalar(name, value);
  return name;
}

void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void set_attr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

namespace {

void set_type(onnx::ValueInfoProto& vi, const std::string& name, int32_t elem_type,
              const Shape& shape) {
  vi.set_name(name);
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* s = tt->mutable_shape();
  for (int64_t d : shape) s->add_dim()->set_dim_value(d);
}

// Like set_type, with the dimensions that follow a symbolic one (they differ between `shape`
// and one of `alts`) written without a value: with the name in `names` when given, else the
// symbolic dimension's own name when the dimension is exactly it.
void set_symbolic_type(onnx::ValueInfoProto& vi, const std::string& name, int32_t elem_type,
                       const Shape& shape, const std::vector<Shape>& alts,
                       const std::vector<SymbolicDim>& dims,
                       const std::vector<std::string>& names) {
  set_type(vi, name, elem_type, shape);
  auto* s = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
  for (size_t j = 0; j < shape.size(); ++j) {
    std::vector<size_t> follows;
    for (size_t p = 0; p < alts.size(); ++p)
      if (alts[p][j] != shape[j]) follows.push_back(p);
    if (follows.empty()) continue;
    auto* d = s->mutable_dim(static_cast<int>(j));
    d->clear_dim_value();
    if (j < names.size() && !names[j].empty()) {
      d->set_dim_param(names[j]);
    } else if (follows.size() == 1) {
      const SymbolicDim& sd = dims[follows[0]];
      if (shape[j] == sd.value && alts[follows[0]][j] == sd.alt) d->set_dim_param(sd.name);
    }
  }
}

const OnnxValue* find_value(const std::vector<OnnxValue>& vs, const std::string& name) {
  for (const auto& v : vs)
    if (v.name == name) return &v;
  return nullptr;
}

// The order nodes are written in, which runtimes such as ONNX Runtime follow: depth-first
// from the graph outputs, each node right after the last of its inputs, so that a branch is
// computed in one go and its tensors die early (as a framework's trace orders them). A
// breadth-first order (e.g. by node id after rewrites) keeps many tensors alive at once.
std::vector<NodeId> execution_order(const Graph& g) {
  std::vector<uint8_t> state(g.num_slots(), 0);  // 0 new, 1 on the stack, 2 emitted
  std::vector<NodeId> order;
  std::vector<std::pair<NodeId, size_t>> stack;  // node, next input to visit
  auto visit = [&](NodeId root) {
    if (state[root]) return;
    stack.emplace_back(root, 0);
    state[root] = 1;
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      const auto& ins = g.node(id).inputs;
      if (next < ins.size()) {
        NodeId in = ins[next++].node;
        if (state[in] == 0) {
          state[in] = 1;
          stack.emplace_back(in, 0);
        } else if (state[in] == 1) {
          throw Error(fmt::format("export: cycle through {}", g.describe(in)));
        }
        continue;
      }
      state[id] = 2;
      order.push_back(id);
      stack.pop_back();
    }
  };
  for (const auto& o : g.outputs()) visit(o.ref.node);
  return order;
}

// The IR version a model of this opset needs: the one of the first ONNX release with that
// opset (ONNX's release table), at least 4, whose graph inputs need not list the
// initializers, and at least the source's. Never past the pinned release's onnx::IR_VERSION.
int64_t ir_version_for(int64_t opset, int64_t source_ir) {
  static const std::map<int64_t, int64_t> first_ir = {{7, 3},   {9, 4},   {10, 5},  {11, 6},
                                                      {12, 7},  {15, 8},  {19, 9},  {21, 10},
                                                      {23, 11}, {24, 12}, {25, 13}, {28, 14}};
  auto it = first_ir.upper_bound(opset);
  int64_t need = it == first_ir.begin() ? 3 : std::prev(it)->second;
  return std::min<int64_t>(std::max({need, source_ir, int64_t{4}}), onnx::IR_VERSION);
}

class Exporter {
 public:
  Exporter(const Graph& g, const OnnxModelInfo* info, const ExportOptions& opts)
      : g_(g), info_(info), opts_(opts) {}
  onnx::ModelProto run();

 private:
  void name_sources();
  void name_outputs();
  void write_weight(NodeId id);
  void write_nodes();
  void write_interface();
  void write_header(const std::set<std::string>& domains);
  void instantiate_symbolic_dims();
  bool symbolic(TensorRef r) const;
  std::vector<SymbolicDim> symbolic_dims() const {
    return info_ ? info_->symbolic : std::vector<SymbolicDim>{};
  }
  std::vector<Shape> alt_shapes(TensorRef r) const;
  // A shape tensor's part: a literal, or factor x (symbolic dimension p) as (p, factor).
  using TargetPart = std::variant<int64_t, std::pair<size_t, int64_t>>;
  std::optional<std::pair<size_t, int64_t>> multiple_of_symbolic(const Shape& out,
                                                                 const std::vector<Shape>& alt,
                                                                 size_t j) const;
  std::string shape_tensor(const std::string& stem, const std::vector<TargetPart>& parts);
  std::string symbolic_reshape_target(NodeId id);
  std::string symbolic_expand_target(NodeId id);
  std::string symbolic_dim_expr(size_t p, int64_t factor);

  Graph g_;
  const OnnxModelInfo* info_;
  const ExportOptions& opts_;
  onnx::ModelProto m_;
  std::unique_ptr<ExportContext> c_;
  std::map<TensorRef, std::string> output_names_;  // tensors that must carry an output's name
  std::vector<std::pair<std::string, TensorRef>> aliases_;  // outputs written by Identity
  // The graph at the alternate value of each symbolic dimension, and where each tensor of
  // g_ is in it (empty when the model has no symbolic dimensions).
  std::vector<Graph> alts_;
  std::vector<std::map<TensorRef, TensorRef>> alt_maps_;
  std::map<std::pair<size_t, int64_t>, std::string> dim_exprs_;  // (dim, factor) -> tensor
};

void Exporter::instantiate_symbolic_dims() {
  if (!info_) return;
  for (size_t p = 0; p < info_->symbolic.size(); ++p) {
    alt_maps_.emplace_back();
    alts_.push_back(instantiate_symbolic(g_, *info_, p, &alt_maps_.back()));
  }
}

std::vector<Shape> Exporter::alt_shapes(TensorRef r) const {
  std::vector<Shape> s;
  for (size_t p = 0; p < alts_.size(); ++p) s.push_back(alts_[p].type(alt_maps_[p].at(r)).shape);
  return s;
}

bool Exporter::symbolic(TensorRef r) const {
  for (const auto& s : alt_shapes(r))
    if (s != g_.type(r).shape) return true;
  return false;
}

// A 1-d int64 tensor holding factor x (symbolic dimension p) at run time, read from the
// shape of an input that has it.
std::string Exporter::symbolic_dim_expr(size_t p, int64_t factor) {
  auto cached = dim_exprs_.find({p, factor});
  if (cached != dim_exprs_.end()) return cached->second;
  const std::string& name = info_->symbolic[p].name;
  for (const auto& v : info_->inputs)
    for (size_t d = 0; d < v.dim_params.size(); ++d) {
      if (v.dim_params[d] != name) continue;
      std::string stem = c_->fresh(name + "_dim");
      std::string shape = c_->fresh(stem + "_shape");
      c_->node("Shape", {v.name}, {shape}, stem + "_shape");
      std::string value = c_->fresh(stem);
      auto& g = c_->node("Gather", {shape, c_->int64_const(stem + "_index", {int64_t(d)})}, {value},
                         stem + "_gather");
      set_attr(g, "axis", int64_t{0});
      if (factor != 1) {
        std::string scaled = c_->fresh(fmt::format("{}_x{}", stem, factor));
        c_->node("Mul", {value, c_->int64_const(stem + "_factor", {factor})}, {scaled},
                 stem + "_mul");
        value = scaled;
      }
      return dim_exprs_[{p, factor}] = value;
    }
  throw Error(fmt::format("export: no input has symbolic dimension '{}'", name));
}

// Dimension j of `out` (at the imported values, `alt` at each alternate one) as a multiple of
// exactly one symbolic dimension: (p, factor), or nullopt.
std::optional<std::pair<size_t, int64_t>> Exporter::multiple_of_symbolic(
    const Shape& out, const std::vector<Shape>& alt, size_t j) const {
  std::vector<size_t> follows;
  for (size_t p = 0; p < alt.size(); ++p)
    if (alt[p][j] != out[j]) follows.push_back(p);
  if (follows.size() != 1) return std::nullopt;
  const SymbolicDim& sd = info_->symbolic[follows[0]];
  int64_t factor = out[j] / sd.value;
  if (factor * sd.value != out[j] || factor * sd.alt != alt[follows[0]][j]) return std::nullopt;
  return std::pair{follows[0], factor};
}

// A 1-d int64 shape written as one tensor: each part a literal or a multiple of a symbolic
// dimension (p, factor); literals that follow each other are one constant.
std::string Exporter::shape_tensor(const std::string& stem, const std::vector<TargetPart>& parts) {
  std::vector<std::string> pieces;
  std::vector<int64_t> literal;
  auto flush = [&] {
    if (!literal.empty()) pieces.push_back(c_->int64_const(stem + "_shape", literal));
    literal.clear();
  };
  for (const auto& part : parts) {
    if (const auto* v = std::get_if<int64_t>(&part)) {
      literal.push_back(*v);
    } else {
      flush();
      const auto& [p, factor] = std::get<std::pair<size_t, int64_t>>(part);
      pieces.push_back(symbolic_dim_expr(p, factor));
    }
  }
  flush();
  if (pieces.size() == 1) return pieces[0];
  std::string target = c_->fresh(stem + "_shape");
  set_attr(c_->node("Concat", pieces, {target}, stem + "_shape"), "axis", int64_t{0});
  return target;
}

// The target of a reshape whose shape follows symbolic dimensions: fixed dimensions as
// they are, dimensions copied from the input as 0, one other as -1, and the rest computed
// from an input's shape. Written before the Reshape node (it reads only graph inputs).
std::string Exporter::symbolic_reshape_target(NodeId id) {
  const Node& n = g_.node(id);
  TensorRef in = n.inputs[0];
  const Shape &ib = g_.type(in).shape, &ob = n.outputs[0].shape;
  auto ia = alt_shapes(in), oa = alt_shapes({id, 0});
  // Each dimension: fixed, copied from the input (0), a multiple of one symbolic dimension,
  // or neither (a sum of two, say), which only -1 can state: -1 goes to such a dimension
  // when there is one, else to the first that follows a symbolic dimension.
  enum Kind { kFixed, kCopied, kMultiple, kOther };
  std::vector<Kind> kinds(ob.size());
  std::vector<std::optional<std::pair<size_t, int64_t>>> multiples(ob.size());
  for (size_t j = 0; j < ob.size(); ++j) {
    bool fixed = true, copied = j < ib.size() && ib[j] == ob[j];
    for (size_t p = 0; p < oa.size(); ++p) {
      fixed = fixed && oa[p][j] == ob[j];
      copied = copied && ia[p][j] == oa[p][j];
    }
    kinds[j] = fixed ? kFixed : copied ? kCopied : kOther;
    if (kinds[j] == kOther && (multiples[j] = multiple_of_symbolic(ob, oa, j)))
      kinds[j] = kMultiple;
  }
  auto other = std::find(kinds.begin(), kinds.end(), kOther);
  if (other != kinds.end() && std::find(other + 1, kinds.end(), kOther) != kinds.end())
    throw Error(
        fmt::format("export: {}: dimensions {} and {} of its target cannot both be "
                    "written in terms of the symbolic input dimensions",
                    g_.describe(id), other - kinds.begin(),
                    std::find(other + 1, kinds.end(), kOther) - kinds.begin()));
  if (other == kinds.end()) other = std::find(kinds.begin(), kinds.end(), kMultiple);
  std::vector<TargetPart> parts;
  for (size_t j = 0; j < ob.size(); ++j) {
    if (kinds[j] == kFixed || kinds[j] == kCopied)
      parts.emplace_back(kinds[j] == kFixed ? ob[j] : int64_t{0});
    else if (static_cast<ptrdiff_t>(j) == other - kinds.begin())
      parts.emplace_back(int64_t{-1});
    else
      parts.emplace_back(*multiples[j]);
  }
  return shape_tensor(n.name.empty() ? fmt::format("reshape_{}", id) : n.name, parts);
}

// The target of an expand whose output follows symbolic dimensions: 1 where the output copies
// the input's dimension (Expand keeps it), fixed dimensions as they are, multiples of one
// symbolic dimension computed from an input's shape. The importer reads an Expand only where
// its target can be written so (runtime_values.h); a rewrite's expand that cannot is an error.
std::string Exporter::symbolic_expand_target(NodeId id) {
  const Node& n = g_.node(id);
  TensorRef in = n.inputs[0];
  const Shape &ib = g_.type(in).shape, &ob = n.outputs[0].shape;
  auto ia = alt_shapes(in), oa = alt_shapes({id, 0});
  size_t lead = ob.size() - std::min(ob.size(), ib.size());  // output axes the input lacks
  std::vector<TargetPart> parts;
  for (size_t j = 0; j < ob.size(); ++j) {
    bool fixed = true, copied = j >= lead && ib[j - lead] == ob[j];
    for (size_t p = 0; p < oa.size(); ++p) {
      fixed = fixed && oa[p][j] == ob[j];
      copied = copied && ia[p][j - lead] == oa[p][j];
    }
    if (copied || fixed) {
      parts.emplace_back(copied ? int64_t{1} : ob[j]);
    } else if (auto m = multiple_of_symbolic(ob, oa, j)) {
      parts.emplace_back(*m);
    } else {
      throw Error(fmt::format(
          "export: {}: dimension {} of its target cannot be written in terms of the symbolic "
          "input dimensions",
          g_.describe(id), j));
    }
  }
  return shape_tensor(n.name.empty() ? fmt::format("expand_{}", id) : n.name, parts);
}

void Exporter::name_sources() {
  for (NodeId id : g_.inputs()) {
    const std::string& name = g_.node(id).name;
    if (name.empty() || c_->used.count(name))
      throw Error(fmt::format("export: graph input {} needs a unique name", g_.describe(id)));
    c_->used.insert(name);
    c_->names[{id, 0}] = name;
  }
  // Graph output names are reserved before weights so that a weight never takes one.
  for (const auto& o : g_.outputs()) {
    if (o.name.empty()) throw Error("export: a graph output has no name");
    if (c_->used.count(o.name) && !g_.node(o.ref.node).is_input())
      throw Error(fmt::format("export: graph output name '{}' is used twice", o.name));
    c_->used.insert(o.name);
  }
  for (NodeId id : g_.weights()) write_weight(id);
}

void Exporter::write_weight(NodeId id) {
  const Node& n = g_.node(id);
  std::string name = c_->fresh(n.name.empty() ? fmt::format("weight_{}", id) : n.name);
  c_->names[{id, 0}] = name;
  onnx::TensorProto t;
  if (n.data) {
    t = make_float_tensor(name, n.outputs[0].shape, *n.data);
  } else {
    const std::string* raw = nullptr;
    if (info_) {
      auto it = info_->raw_initializers.find(n.name);
      if (it != info_->raw_initializers.end()) raw = &it->second;
    }
    if (!raw || !t.ParseFromString(*raw))
      throw Error(
          fmt::format("export: weight '{}' ({}) has no data to write", n.name, n.outputs[0].str()));
    t.set_name(name);
  }
  *c_->gp.add_initializer() = std::move(t);
}

void Exporter::name_outputs() {
  for (const auto& o : g_.outputs()) {
    const Node& src = g_.node(o.ref.node);
    if (src.is_input() && src.name == o.name) continue;  // an input passed straight through
    bool taken = output_names_.count(o.ref) || src.is_source();
    if (taken)
      aliases_.emplace_back(o.name, o.ref);  // Identity from the tensor to the output
    else
      output_names_[o.ref] = o.name;
  }
}

void Exporter::write_nodes() {
  for (NodeId id : execution_order(g_)) {
    const Node& n = g_.node(id);
    if (n.is_source()) continue;
    std::vector<std::string> outs;
    std::string stem = n.name.empty() ? fmt::format("{}_{}", n.op->name, id) : n.name;
    for (uint32_t i = 0; i < n.outputs.size(); ++i) {
      auto it = output_names_.find({id, i});
      std::string name =
          it != output_names_.end()
              ? it->second
              : c_->fresh(n.outputs.size() == 1 ? stem + "_out" : fmt::format("{}_out{}", stem, i));
      c_->names[{id, i}] = name;
      outs.push_back(name);
    }
    // Reshape and Expand targets that follow symbolic dimensions, written anew.
    std::string target, target_of;
    if (!alts_.empty() && (n.op->name == "reshape" || n.op->name == "expand") &&
        symbolic({id, 0})) {
      bool reshape = n.op->name == "reshape";
      target = reshape ? symbolic_reshape_target(id) : symbolic_expand_target(id);
      target_of = reshape ? "Reshape" : "Expand";
    }
    write_operator(*c_, id, outs);
    if (!target.empty()) {
      for (int k = c_->gp.node_size(); k-- > 0;) {
        auto& written = *c_->gp.mutable_node(k);
        if (written.op_type() == target_of && written.output_size() == 1 &&
            written.output(0) == outs[0]) {
          // The fixed target write_operator made is read by nobody now.
          std::string fixed = written.input(1);
          written.set_input(1, target);
          auto* inits = c_->gp.mutable_initializer();
          for (int i = inits->size(); i-- > 0;)
            if (inits->Get(i).name() == fixed) {
              inits->DeleteSubrange(i, 1);
              break;
            }
          break;
        }
      }
    }
    if (n.op->cls == OpClass::Opaque) {
      // Shapes of opaque outputs: ONNX cannot infer them for custom domains.
      auto absent = absent_positions(n.attrs, kOpaqueAbsentOut);
      for (uint32_t i = 0; i < n.outputs.size(); ++i) {
        if (std::count(absent.begin(), absent.end(), static_cast<int64_t>(i))) continue;
        if (output_names_.count({id, i})) continue;  // graph outputs carry their own type
        int32_t et = onnx_from_dtype(n.outputs[i].dtype);
        if (n.attrs.has(kOpaqueOutTypes) && i < n.attrs.ints(kOpaqueOutTypes).size())
          et = static_cast<int32_t>(n.attrs.ints(kOpaqueOutTypes)[i]);
        if (et == 0) continue;
        set_symbolic_type(*c_->gp.add_value_info(), outs[i], et, n.outputs[i].shape,
                          alt_shapes({id, i}), symbolic_dims(), {});
      }
    }
  }
  for (const auto& [name, ref] : aliases_)
    c_->node("Identity", {c_->name(ref)}, {name}, name + "_identity");
}

void Exporter::write_interface() {
  for (NodeId id : g_.inputs()) {
    const Node& n = g_.node(id);
    const OnnxValue* v = info_ ? find_value(info_->inputs, n.name) : nullptr;
    int32_t et = v ? v->elem_type : onnx_from_dtype(n.outputs[0].dtype);
    set_symbolic_type(*c_->gp.add_input(), n.name, et, n.outputs[0].shape, alt_shapes({id, 0}),
                      symbolic_dims(), v ? v->dim_params : std::vector<std::string>{});
  }
  for (const auto& o : g_.outputs()) {
    const TensorType& t = g_.type(o.ref);
    const OnnxValue* v = info_ ? find_value(info_->outputs, o.name) : nullptr;
    int32_t et = v ? v->elem_type : onnx_from_dtype(t.dtype);
    if (v && v->shape != t.shape)
      throw Error(fmt::format("export: output '{}' is {} but the original model's is {}", o.name,
                              shape_str(t.shape), shape_str(v->shape)));
    set_symbolic_type(*c_->gp.add_output(), o.name, et, t.shape, alt_shapes(o.ref), symbolic_dims(),
                      v ? v->dim_params : std::vector<std::string>{});
  }
}

// The metadata entry that keeps the producer of the model graphsub was given.
constexpr const char* kSourceProducerKey = "graphsub.source_producer";

void Exporter::write_header(const std::set<std::string>& domains) {
  int64_t source_ir = info_ ? info_->ir_version : 8;
  m_.set_ir_version(ir_version_for(c_->opset, source_ir));
  m_.set_producer_name(opts_.producer);
  m_.set_producer_version("0.1");
  std::map<std::string, int64_t> opsets{{"", c_->opset}};
  if (info_) {
    for (const auto& [d, v] : info_->opsets)
      if (!d.empty()) opsets[d] = v;
    m_.set_domain(info_->model_domain);
    m_.set_model_version(info_->model_version);
    bool has_source_producer = false;
    for (const auto& [k, v] : info_->metadata_props) {
      auto* p = m_.add_metadata_props();
      p->set_key(k);
      p->set_value(v);
      has_source_producer |= k == kSourceProducerKey;
    }
    for (const auto& f : info_->functions)
      if (!m_.add_functions()->ParseFromString(f))
        throw Error("export: a model-local function of the source model is corrupt");
    // A model graphsub wrote already names its first producer; a second entry would be a
    // duplicate key, which onnx::checker refuses.
    if (!info_->producer_name.empty() && !has_source_producer) {
      auto* p = m_.add_metadata_props();
      p->set_key(kSourceProducerKey);
      p->set_value(info_->producer_name + " " + info_->producer_version);
    }
  }
  for (const auto& d : domains) opsets.emplace(d, 1);  // custom domains new to this model
  for (const auto& [d, v] : opsets) {
    auto* o = m_.add_opset_import();
    o->set_domain(d);
    o->set_version(v);
  }
}

onnx::ModelProto Exporter::run() {
  precompute_weights(g_, /*generators_too=*/true);
  g_.remove_dead();
  g_.compact();
  int64_t opset = written_onnx_opset(opts_.opset, info_);
  if (opset < kMinOnnxOpset || opset > newest_onnx_opset())
    throw Error(fmt::format("export: opset {} is not supported ({} to {})", opset, kMinOnnxOpset,
                            newest_onnx_opset()));
  onnx::GraphProto& gp = *m_.mutable_graph();
  gp.set_name(info_ && !info_->graph_name.empty() ? info_->graph_name : "graphsub");
  c_ = std::make_unique<ExportContext>(g_, gp, opset);
  if (opts_.adds_as_sum)
    for (NodeId id : opts_.adds_as_sum(g_)) c_->adds_as_sum.insert(id);
  instantiate_symbolic_dims();
  name_sources();
  name_outputs();
  write_nodes();
  write_interface();
  write_header(c_->domains);
  if (info_) narrow_to_half(m_, info_->float_type);  // a half model keeps its type
  try {
    onnx::checker::check_model(m_);
  } catch (const std::exception& e) {
    throw Error(fmt::format("export: the written model fails onnx::checker: {}", e.what()));
  }
  return std::move(m_);
}

}  // namespace

int64_t written_onnx_opset(int64_t requested, const OnnxModelInfo* info) {
  return requested ? requested : info && info->opset() ? info->opset() : 17;
}

std::string export_onnx_bytes(const Graph& g, const OnnxModelInfo* info,
                              const ExportOptions& opts) {
  onnx::ModelProto m = Exporter(g, info, opts).run();
  std::string bytes;
  if (!m.SerializeToString(&bytes))
    throw Error("export: the model cannot be serialized (over protobuf's 2 GiB limit?)");
  return bytes;
}

namespace {

std::map<std::string, int64_t> write_exported(onnx::ModelProto& m, const OnnxModelInfo* info,
                                              const std::string& path, const ExportOptions& opts) {
  std::map<std::string, int64_t> counts = node_counts(m);
  int64_t weight_bytes = 0;
  for (const auto& t : m.graph().initializer()) weight_bytes += tensor_byte_size(t);
  write_model(m, path, opts.external_data || weight_bytes > opts.external_threshold_bytes,
              info ? info->source_files : std::vector<std::string>{});
  return counts;
}

}  // namespace

std::map<std::string, int64_t> export_onnx_file(const Graph& g, const OnnxModelInfo* info,
                                                const std::string& path,
                                                const ExportOptions& opts) {
  onnx::ModelProto m = Exporter(g, info, opts).run();
  return write_exported(m, info, path, opts);
}

std::map<std::string, int64_t> write_onnx_bytes(const std::string& model_bytes,
                                                const OnnxModelInfo* info, const std::string& path,
                                                const ExportOptions& opts) {
  onnx::ModelProto m = parse_model(model_bytes, path);
  return write_exported(m, info, path, opts);
}

void ensure_output_is_not_input(const std::string& input, const std::string& output) {
  namespace fs = std::filesystem;
  for (const std::string& out : {output, output + ".data"}) {
    std::error_code ec;
    if (fs::equivalent(input, out, ec))
      throw Error(
          fmt::format("the output '{}' is the same file as the input '{}'; choose "
                      "another output file",
                      out, input));
  }
}

}  // namespace graphsub
