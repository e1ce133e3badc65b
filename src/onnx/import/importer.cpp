// The importer's driver: checks the model, orders its nodes, runs ONNX shape inference,
// creates inputs and weights, converts each node (or keeps it opaque) and checks that the
// shapes graphsub infers agree with ONNX's.
#include <fmt/format.h>
#include <onnx/common/version.h>
#include <onnx/defs/schema.h>
#include <onnx/inliner/inliner.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <queue>

#include "core/error.h"
#include "onnx/format/half_precision.h"
#include "onnx/format/model_io.h"
#include "onnx/format/opaque_attrs.h"
#include "onnx/format/operator_versions.h"
#include "onnx/format/shape_inference.h"
#include "onnx/format/tensor_proto.h"
#include "onnx/import/import_context.h"
#include "onnx/import/runtime_values.h"
#include "onnx/import/symbolic_dims.h"

namespace graphsub {
namespace {

using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;

bool default_domain(const std::string& d) {
  return d.empty() || d == "ai.onnx";
}

int64_t check_opsets(const ModelProto& m, const std::string& label) {
  int64_t version = -1;
  for (const auto& o : m.opset_import())
    if (default_domain(o.domain())) version = o.version();
  if (version < 0) {
    // Only other domains' operators (ai.onnx.ml, say): they are kept opaque, and anything
    // graphsub writes is of the newest opset. A default-domain node would have no version.
    for (const auto& n : m.graph().node())
      if (default_domain(n.domain()))
        throw Error(
            fmt::format("{}: {} is of the default ONNX domain, which the model does not "
                        "import (no opset_import for it)",
                        label, ImportContext::label(n)));
    return newest_onnx_opset();
  }
  if (version < kMinOnnxOpset || version > newest_onnx_opset())
    throw Error(
        fmt::format("{}: opset {} of the default ONNX domain is not supported (graphsub "
                    "reads opsets {} to {}, those of ONNX {}; convert the model with "
                    "onnx.version_converter)",
                    label, version, kMinOnnxOpset, newest_onnx_opset(), ONNX_VERSION_STRING));
  return version;
}

// Node order in which every node follows the producers of its inputs. Throws on tensors
// produced twice, inputs nobody produces, and cycles.
std::vector<int> topological_nodes(const GraphProto& gp, const std::set<std::string>& defined,
                                   const std::string& label) {
  int n = gp.node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& out : gp.node(i).output()) {
      if (out.empty()) continue;
      if (defined.count(out))
        throw Error(fmt::format("{}: {} writes '{}', which is already a graph input or initializer",
                                label, ImportContext::label(gp.node(i)), out));
      auto [it, fresh] = producer.emplace(out, i);
      if (!fresh)
        throw Error(fmt::format("{}: tensor '{}' is produced by two nodes, {} and {}", label, out,
                                ImportContext::label(gp.node(it->second)),
                                ImportContext::label(gp.node(i))));
    }
  std::vector<int> pending(static_cast<size_t>(n), 0);
  std::vector<std::vector<int>> users(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::set<int> deps;
    for (const auto& in : gp.node(i).input()) {
      if (in.empty() || defined.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        throw Error(
            fmt::format("{}: {} reads '{}', which is not a graph input, an initializer or "
                        "the output of any node (missing initializer?)",
                        label, ImportContext::label(gp.node(i)), in));
      deps.insert(it->second);
    }
    pending[i] = static_cast<int>(deps.size());
    for (int d : deps) users[d].push_back(i);
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;  // file order among ready
  for (int i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i)
      if (pending[i] > 0)
        throw Error(fmt::format("{}: the graph has a cycle through {}", label,
                                ImportContext::label(gp.node(i))));
  }
  return order;
}

OnnxTensorInfo info_of(const onnx::TypeProto& t) {
  OnnxTensorInfo r;
  if (!t.has_tensor_type()) return r;
  r.elem_type = t.tensor_type().elem_type();
  if (!t.tensor_type().has_shape()) return r;
  Shape s;
  for (const auto& d : t.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return r;
    s.push_back(d.dim_value());
  }
  r.shape = std::move(s);
  return r;
}

class Importer {
 public:
  // `source_file`: the file read, when the model came from one (recorded in the info).
  Importer(ModelProto& m, std::string base_dir, const ImportOptions& opts, Reporter& rep,
           std::string label, const std::string& source_file = "")
      : m_(m),
        gp_(*m.mutable_graph()),
        base_dir_(std::move(base_dir)),
        opts_(opts),
        rep_(rep),
        label_(std::move(label)) {
    if (!source_file.empty()) info_->source_files.push_back(source_file);
  }

  ImportedModel run();
  // Tensors to compute at run time though they could be evaluated (runtime_values.h).
  void compute_at_run_time(std::set<std::string> names) { runtime_ = std::move(names); }
  // Slices to keep though they copy their whole input here (ImportContext::slices_kept).
  void keep_slices(std::set<std::string> names) { slices_kept_ = std::move(names); }
  const FoldTrace& fold_trace() const { return trace_; }
  // The symbolic dimensions set to ImportOptions::default_dim (known once inputs are read).
  const std::set<std::string>& defaulted_dims() const { return defaulted_dims_; }

 private:
  void read_info();
  void collect_initializers();
  void widen_if_half();
  void create_inputs();
  void infer_onnx_shapes(const std::vector<int>& order);
  void ensure_weight(const std::string& name);
  bool try_fold(const NodeProto& n);
  std::optional<std::string> unread_form(const NodeProto& n) const;
  std::string keep_all_reason_;  // set when no node is to be converted (an empty input)
  void inline_local_functions();
  void convert(const NodeProto& n, const std::string& node_name);
  void keep_opaque(const NodeProto& n, const std::string& reason);
  void infer_node_shapes(const NodeProto& n);
  void bind_outputs(const NodeProto& n, const std::vector<TensorRef>& outs);
  void add_outputs();
  std::set<std::string> read_names() const;

  ModelProto& m_;
  GraphProto& gp_;
  std::string base_dir_;
  const ImportOptions& opts_;
  Reporter& rep_;
  std::string label_;
  ImportedModel result_;
  std::shared_ptr<OnnxModelInfo> info_ = std::make_shared<OnnxModelInfo>();
  std::unique_ptr<ImportContext> ctx_;
  std::map<std::string, Shape> input_shapes_;  // concrete shapes of graph inputs
  std::set<std::string> consumed_;             // tensors read by some node or graph output
  std::set<std::string> runtime_;              // evaluated, yet computed at run time too
  std::set<std::string> slices_kept_;          // no-op Slices kept (symbolic dimensions)
  std::set<std::string> dim_names_seen_;       // symbolic dimensions of the inputs
  std::set<std::string> defaulted_dims_;       // those at default_dim
  FoldTrace trace_;                            // what was evaluated, and where it was read
  bool produces_runtime_value(const NodeProto& n) const;
  void record_fixed_reads(const NodeProto& n, bool opaque);
  int64_t total_bytes_ = 0;  // of the tensors counted so far
  void count_tensor(const std::string& what, const TensorType& t);
};

// Every tensor of the graph passes here once: the per-tensor and total limits of
// ImportOptions, checked while the types are known and before anything is allocated.
void Importer::count_tensor(const std::string& what, const TensorType& t) {
  auto n = checked_numel(t.shape);
  if (!n || *n > opts_.max_tensor_elements)
    throw Error(fmt::format(
        "{}: {} has shape {}, {} elements, over the limit of {} elements "
        "a tensor (ImportOptions::max_tensor_elements)",
        label_, what, shape_str(t.shape), n ? fmt::format("{}", *n) : std::string("more than 2^60"),
        opts_.max_tensor_elements));
  auto bytes = checked_mul(*n, static_cast<int64_t>(dtype_size(t.dtype)));
  auto total = bytes ? checked_add(total_bytes_, *bytes) : std::nullopt;
  if (!total || *total > opts_.max_total_bytes)
    throw Error(fmt::format(
        "{}: the graph's tensors need more than {} bytes together (at {}, "
        "shape {}), over the limit of {} bytes "
        "(ImportOptions::max_total_bytes)",
        label_, opts_.max_total_bytes, what, shape_str(t.shape), opts_.max_total_bytes));
  total_bytes_ = *total;
}

void Importer::read_info() {
  OnnxModelInfo& info = *info_;
  info.ir_version = m_.ir_version();
  for (const auto& o : m_.opset_import())
    info.opsets.emplace_back(default_domain(o.domain()) ? "" : o.domain(), o.version());
  std::sort(info.opsets.begin(), info.opsets.end());
  info.producer_name = m_.producer_name();
  info.producer_version = m_.producer_version();
  info.model_domain = m_.domain();
  info.model_version = m_.model_version();
  info.graph_name = gp_.name();
  for (const auto& p : m_.metadata_props()) info.metadata_props.emplace_back(p.key(), p.value());
  for (const auto& f : m_.functions()) info.functions.push_back(f.SerializeAsString());
}

// Model-local functions (torch's dynamo exporter writes them) are inlined, so that their
// bodies are optimized like the rest of the graph; when ONNX's inliner cannot, their calls stay
// opaque nodes and the functions are written back whole.
void Importer::inline_local_functions() {
  int n = m_.functions_size();
  if (n == 0) return;
  onnx::ModelProto copy = m_;
  try {
    onnx::inliner::InlineLocalFunctions(copy, /*convert_version=*/true);
  } catch (const std::exception& e) {
    result_.summary.notes.push_back(fmt::format(
        "model-local functions kept whole (ONNX's inliner failed: {}); their calls are opaque",
        e.what()));
    return;
  }
  // Swapped in place: gp_ refers to the model's graph object, which must stay the same.
  gp_.Swap(copy.mutable_graph());
  *m_.mutable_functions() = copy.functions();
  *m_.mutable_opset_import() = copy.opset_import();
  result_.summary.notes.push_back(
      fmt::format("{} model-local function{} inlined", n, n == 1 ? "" : "s"));
}

void Importer::collect_initializers() {
  for (auto& t : *gp_.mutable_initializer()) {
    if (t.name().empty()) throw Error(fmt::format("{}: an initializer has no name", label_));
    if (ctx_->initializers.count(t.name()))
      throw Error(fmt::format("{}: two initializers are named '{}'", label_, t.name()));
    if (!onnx_type_valid(t.data_type()))
      throw Error(fmt::format("{}: initializer '{}' has an invalid element type {}", label_,
                              t.name(), t.data_type()));
    std::string what = fmt::format("{}: initializer '{}'", label_, t.name());
    TensorType type;
    type.dtype = dtype_from_onnx(t.data_type());
    type.shape = tensor_dims(t, what);
    count_tensor(fmt::format("initializer '{}'", t.name()), type);
    std::string file = inline_external_data(t, base_dir_);
    if (!file.empty() && std::find(info_->source_files.begin(), info_->source_files.end(), file) ==
                             info_->source_files.end())
      info_->source_files.push_back(file);
    ctx_->initializers[t.name()] = &t;
    ctx_->used_names.insert(t.name());
  }
}

// A model computing in float16 or bfloat16 throughout is imported as float32 (exact), and
// written back in its type; one that mixes types keeps its half-typed nodes opaque.
void Importer::widen_if_half() {
  info_->float_type = uniform_half_type(m_);
  if (info_->float_type == TensorProto::FLOAT) return;
  std::string type = onnx_type_name(info_->float_type);
  widen_half_model(m_, info_->float_type);
  result_.summary.notes.push_back(
      fmt::format("{} model: searched and checked in float32 (every value widened exactly), "
                  "written back as {}; the check's tolerances are at least those of {}",
                  type, type, type));
}

void Importer::create_inputs() {
  std::set<std::string> seen, defaulted;
  for (const auto& vi : gp_.input()) {
    if (ctx_->initializers.count(vi.name())) continue;  // IR < 4 lists initializers as inputs
    if (vi.name().empty()) throw Error(fmt::format("{}: a graph input has no name", label_));
    if (!seen.insert(vi.name()).second)
      throw Error(fmt::format("{}: two graph inputs are named '{}'", label_, vi.name()));
    if (!vi.type().has_tensor_type())
      throw Error(fmt::format("{}: graph input '{}' is not a tensor", label_, vi.name()));
    const auto& tt = vi.type().tensor_type();
    if (!onnx_type_valid(tt.elem_type()))
      throw Error(fmt::format("{}: graph input '{}' has an invalid element type {}", label_,
                              vi.name(), tt.elem_type()));
    OnnxValue v{.name = vi.name(), .elem_type = tt.elem_type()};
    auto over = opts_.input_shapes.find(vi.name());
    if (!tt.has_shape() && over == opts_.input_shapes.end())
      throw Error(fmt::format("{}: graph input '{}' has no shape; give one (--input-shape {}=...)",
                              label_, vi.name(), vi.name()));
    if (tt.has_shape()) {
      for (const auto& d : tt.shape().dim()) {
        bool fixed = d.has_dim_value() && d.dim_value() >= 0;
        std::string param = fixed ? "" : (d.has_dim_param() ? d.dim_param() : "?");
        auto given = opts_.dim_values.find(param);
        v.shape.push_back(fixed                             ? d.dim_value()
                          : given != opts_.dim_values.end() ? given->second
                                                            : opts_.default_dim);
        v.dim_params.push_back(param);
        if (!fixed) dim_names_seen_.insert(param);
        if (!fixed && given == opts_.dim_values.end() && !opts_.input_shapes.count(vi.name()))
          defaulted.insert(param);
      }
    }
    if (over != opts_.input_shapes.end()) {
      if (tt.has_shape() && over->second.size() != v.shape.size())
        throw Error(
            fmt::format("{}: --input-shape for '{}' has rank {}, the model's input has "
                        "rank {}",
                        label_, vi.name(), over->second.size(), v.shape.size()));
      for (size_t i = 0; i < v.shape.size(); ++i)
        if (v.dim_params[i].empty() && v.shape[i] != over->second[i])
          throw Error(fmt::format("{}: --input-shape {} for '{}' contradicts its fixed shape",
                                  label_, shape_str(over->second), vi.name()));
      v.dim_params.resize(over->second.size());
      v.shape = over->second;
    } else if (std::any_of(v.dim_params.begin(), v.dim_params.end(),
                           [](const std::string& p) { return !p.empty(); })) {
      std::vector<std::string> params;
      for (const auto& p : v.dim_params)
        if (!p.empty()) params.push_back(p);
      result_.summary.notes.push_back(
          fmt::format("input '{}': symbolic dimension{} {} set to shape {} for the "
                      "optimization, kept symbolic in the written model; use --dim NAME=VALUE "
                      "to choose the value (default {})",
                      vi.name(), params.size() == 1 ? "" : "s", fmt::join(params, ", "),
                      shape_str(v.shape), opts_.default_dim));
    }
    for (int64_t d : v.shape) {
      if (d < 0)
        throw Error(fmt::format("{}: graph input '{}' has shape {}; dimensions must be 0 or more",
                                label_, vi.name(), shape_str(v.shape)));
      // graphsub's operators compute on non-empty tensors: a model with an empty input is
      // kept as written, every node opaque (its shapes from ONNX inference).
      if (d == 0 && keep_all_reason_.empty())
        keep_all_reason_ =
            fmt::format("graph input '{}' is empty (shape {}): the model is kept as written",
                        vi.name(), shape_str(v.shape));
    }
    TensorType t;
    t.dtype = dtype_from_onnx(v.elem_type);
    t.shape = v.shape;
    count_tensor(fmt::format("graph input '{}'", vi.name()), t);
    ctx_->tensors[vi.name()] = {ctx_->g.add_input(vi.name(), t), 0};
    ctx_->used_names.insert(vi.name());
    input_shapes_[vi.name()] = v.shape;
    info_->inputs.push_back(std::move(v));
  }
  for (const auto& [name, value] : opts_.dim_values)
    if (!dim_names_seen_.count(name))
      throw Error(fmt::format(
          "{}: --dim names '{}', which is not a symbolic dimension of the model's inputs "
          "(theirs: {})",
          label_, name,
          dim_names_seen_.empty() ? "none" : fmt::format("{}", fmt::join(dim_names_seen_, ", "))));
  for (const auto& [name, shape] : opts_.input_shapes)
    if (!seen.count(name))
      throw Error(fmt::format(
          "{}: --input-shape names '{}', which is not an input of the model "
          "(its inputs: {})",
          label_, name, seen.empty() ? "none" : fmt::format("{}", fmt::join(seen, ", "))));
  // The inputs are read: errors from here on may come from the values chosen.
  defaulted_dims_ = std::move(defaulted);
}

// ONNX shape inference on a copy holding the nodes in order, the concrete input shapes and
// only the small initializers (large float ones become typed inputs: their values never
// decide a shape).
void Importer::infer_onnx_shapes(const std::vector<int>& order) {
  ModelProto sm;
  sm.set_ir_version(std::max<int64_t>(m_.ir_version(), 7));
  *sm.mutable_opset_import() = m_.opset_import();
  *sm.mutable_functions() = m_.functions();
  GraphProto& gs = *sm.mutable_graph();
  for (const auto& vi : gp_.input()) {
    if (ctx_->initializers.count(vi.name())) continue;
    auto* in = gs.add_input();
    in->set_name(vi.name());
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(vi.type().tensor_type().elem_type());
    auto* shape = tt->mutable_shape();
    for (int64_t d : input_shapes_.at(vi.name())) shape->add_dim()->set_dim_value(d);
  }
  for (const auto& [name, t] : ctx_->initializers) {
    bool small = t->data_type() != TensorProto::FLOAT || tensor_byte_size(*t) <= 4096;
    if (small) {
      *gs.add_initializer() = *t;
      continue;
    }
    auto* in = gs.add_input();
    in->set_name(name);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(t->data_type());
    auto* shape = tt->mutable_shape();
    for (int64_t d : t->dims()) shape->add_dim()->set_dim_value(d);
  }
  for (int i : order) *gs.add_node() = gp_.node(i);
  *gs.mutable_output() = gp_.output();
  *gs.mutable_value_info() = gp_.value_info();
  // In a child process: ONNX's inference can crash on malformed nodes (shape_inference.h).
  GraphProto g_types =
      infer_shapes_isolated(sm, fmt::format("{}: ONNX shape inference", label_), 300);
  const GraphProto& g = g_types;
  auto record = [&](const onnx::ValueInfoProto& vi) {
    OnnxTensorInfo t = info_of(vi.type());
    auto& slot = ctx_->onnx_types[vi.name()];
    if (t.elem_type) slot.elem_type = t.elem_type;
    if (t.shape) slot.shape = t.shape;
  };
  for (const auto& vi : g.input()) record(vi);
  for (const auto& vi : g.value_info()) record(vi);
  for (const auto& vi : g.output()) record(vi);
  for (const auto& [name, t] : ctx_->initializers) {
    auto& slot = ctx_->onnx_types[name];
    slot.elem_type = t->data_type();
    slot.shape = tensor_dims(*t, name);
  }
}

void Importer::ensure_weight(const std::string& name) {
  if (name.empty() || ctx_->tensors.count(name)) return;
  auto it = ctx_->initializers.find(name);
  if (it == ctx_->initializers.end()) {
    if (ctx_->constants.count(name)) ctx_->materialize(name);
    return;  // otherwise reported by the caller
  }
  const TensorProto& t = *it->second;
  std::string what = fmt::format("{}: initializer '{}'", label_, name);
  TensorType type;
  type.dtype = dtype_from_onnx(t.data_type());
  type.shape = tensor_dims(t, what);
  NodeId id;
  if (t.data_type() == TensorProto::FLOAT) {
    auto data = std::make_shared<const std::vector<float>>(tensor_floats(t, what));
    id = ctx_->g.add_weight(name, std::move(type), std::move(data));
  } else {
    bool integer = t.data_type() == TensorProto::INT64 || t.data_type() == TensorProto::INT32;
    std::vector<int64_t> values = integer ? tensor_ints(t, what) : std::vector<int64_t>{};
    id = ctx_->g.add_weight(name, std::move(type));
    if (integer) ctx_->int_values[id] = std::move(values);
    info_->raw_initializers[name] = t.SerializeAsString();
  }
  ctx_->tensors[name] = {id, 0};
}

// ONNX shape inference of one node from the concrete shapes (and constant values) of its
// inputs: whole-graph inference loses shapes behind some run-time shape computations that
// graphsub has evaluated.
void Importer::infer_node_shapes(const NodeProto& n) {
  if (!default_domain(n.domain())) return;  // ONNX knows no schema of other domains
  ModelProto sm;
  sm.set_ir_version(std::max<int64_t>(m_.ir_version(), 7));
  *sm.mutable_opset_import() = m_.opset_import();
  GraphProto& gs = *sm.mutable_graph();
  std::set<std::string> seen;
  for (const auto& name : n.input()) {
    if (name.empty() || !seen.insert(name).second) continue;
    if (const HostConstant* c = ctx_->known_value(name)) {
      *gs.add_initializer() = to_tensor_proto(*c, name);
      continue;
    }
    auto t = ctx_->tensors.find(name);
    if (t == ctx_->tensors.end()) return;
    auto known = ctx_->onnx_types.find(name);
    auto* tt = gs.add_input();
    tt->set_name(name);
    auto* type = tt->mutable_type()->mutable_tensor_type();
    type->set_elem_type(known != ctx_->onnx_types.end() && known->second.elem_type
                            ? known->second.elem_type
                            : onnx_from_dtype(ctx_->type(t->second).dtype));
    for (int64_t d : ctx_->shape(t->second)) type->mutable_shape()->add_dim()->set_dim_value(d);
  }
  *gs.add_node() = n;
  for (const auto& out : n.output())
    if (!out.empty()) gs.add_output()->set_name(out);
  GraphProto g;
  try {
    g = infer_shapes_isolated(
        sm, fmt::format("{}: ONNX shape inference of {}", label_, ImportContext::label(n)), 60);
  } catch (const Error&) {
    return;  // the caller reports the unknown shape
  }
  for (const auto& vi : g.output()) {
    OnnxTensorInfo t = info_of(vi.type());
    if (!t.shape) continue;
    auto& slot = ctx_->onnx_types[vi.name()];
    slot.shape = t.shape;
    if (t.elem_type) slot.elem_type = t.elem_type;
  }
}

void Importer::keep_opaque(const NodeProto& n, const std::string& reason) {
  record_fixed_reads(n, true);
  std::vector<TensorRef> ins;
  for (int i = 0; i < n.input_size(); ++i)
    if (!n.input(i).empty()) ins.push_back(ctx_->input(n, i));
  for (const auto& name : n.output()) {
    auto it = ctx_->onnx_types.find(name);
    if (!name.empty() && (it == ctx_->onnx_types.end() || !it->second.shape)) {
      infer_node_shapes(n);
      break;
    }
  }
  std::vector<TensorType> outs;
  std::vector<int64_t> elem_types;  // exact ONNX types (the IR maps some to a same-size type)
  for (int i = 0; i < n.output_size(); ++i) {
    TensorType t;
    elem_types.push_back(0);
    const std::string& name = n.output(i);
    auto it = ctx_->onnx_types.find(name);
    bool known = !name.empty() && it != ctx_->onnx_types.end() && it->second.shape &&
                 onnx_type_valid(it->second.elem_type);
    if (known) {
      t.dtype = dtype_from_onnx(it->second.elem_type);
      t.shape = *it->second.shape;
      elem_types.back() = it->second.elem_type;
    } else if (!name.empty() && consumed_.count(name)) {
      throw Error(
          fmt::format("{}: cannot tell the shape of '{}', output {} of {}, which graphsub "
                      "keeps as an opaque node ({}): ONNX shape inference gives none; add "
                      "a value_info entry with its type and shape",
                      label_, name, i, ImportContext::label(n), reason));
    } else {
      t.shape = {0};  // absent or unused output: a placeholder, read by nobody
    }
    outs.push_back(std::move(t));
  }
  Attrs attrs = encode_opaque_attrs(n);
  attrs.set(kOpaqueOutTypes, elem_types);
  NodeId id = ctx_->g.add_opaque(n.op_type(), std::move(ins), std::move(outs), std::move(attrs),
                                 ctx_->node_name);
  std::vector<TensorRef> refs;
  for (uint32_t i = 0; i < static_cast<uint32_t>(n.output_size()); ++i) refs.push_back({id, i});
  bind_outputs(n, refs);
  result_.summary.opaque.push_back(
      {ctx_->node_name, n.op_type(), default_domain(n.domain()) ? "" : n.domain(), reason});
}

void Importer::bind_outputs(const NodeProto& n, const std::vector<TensorRef>& outs) {
  for (int i = 0; i < n.output_size(); ++i) {
    const std::string& name = n.output(i);
    if (name.empty()) continue;
    if (static_cast<size_t>(i) >= outs.size())
      throw Error(fmt::format("{}: {} has {} outputs, graphsub made {}", label_,
                              ImportContext::label(n), n.output_size(), outs.size()));
    TensorRef r = outs[static_cast<size_t>(i)];
    const TensorType& t = ctx_->type(r);
    count_tensor(fmt::format("'{}' (output {} of {})", name, i, ImportContext::label(n)), t);
    auto it = ctx_->onnx_types.find(name);
    if (it != ctx_->onnx_types.end()) {
      const OnnxTensorInfo& o = it->second;
      if (o.shape && *o.shape != t.shape)
        throw Error(fmt::format(
            "{}: inconsistent shapes: '{}' (output {} of {}) is {} by ONNX "
            "shape inference but {} by graphsub",
            label_, name, i, ImportContext::label(n), shape_str(*o.shape), shape_str(t.shape)));
      if (onnx_type_valid(o.elem_type) && dtype_from_onnx(o.elem_type) != t.dtype)
        throw Error(
            fmt::format("{}: inconsistent types: '{}' (output {} of {}) is {} by ONNX "
                        "shape inference but {} by graphsub",
                        label_, name, i, ImportContext::label(n), onnx_type_name(o.elem_type),
                        dtype_name(t.dtype)));
    }
    ctx_->tensors[name] = r;
  }
}

// Evaluates a shape computation whose inputs are all known at import (Shape and Size need
// only their input's shape); its outputs become constants. False leaves the node to the
// converters.
bool Importer::try_fold(const NodeProto& n) {
  if (!default_domain(n.domain()) || !foldable_op(n.op_type()) || unread_form(n)) return false;
  bool dims_only = n.op_type() == "Shape" || n.op_type() == "Size";
  std::vector<HostConstant> shapes;  // dims-only stand-ins for Shape and Size
  shapes.reserve(1);
  std::vector<const HostConstant*> in;
  for (int i = 0; i < n.input_size(); ++i) {
    const std::string& name = n.input(i);
    if (name.empty()) {
      in.push_back(nullptr);
      continue;
    }
    const HostConstant* c = ctx_->constant(name);
    if (!c && dims_only && i == 0) {
      HostConstant s;
      auto t = ctx_->tensors.find(name);
      auto init = ctx_->initializers.find(name);
      if (t != ctx_->tensors.end())
        s.dims = ctx_->shape(t->second);
      else if (init != ctx_->initializers.end())
        s.dims = tensor_dims(*init->second, name);
      else
        return false;
      shapes.push_back(std::move(s));
      c = &shapes.back();
    }
    if (!c) return false;
    in.push_back(c);
  }
  auto out = fold_node(n, in, ctx_->opset);
  if (!out || static_cast<int>(out->size()) != n.output_size()) return false;
  for (const auto& c : *out)
    if (c.real() && c.numel() > kMaxFoldedFloats) return false;
  for (int i = 0; i < n.output_size(); ++i) {
    const std::string& name = n.output(i);
    if (name.empty()) continue;
    const HostConstant& c = (*out)[static_cast<size_t>(i)];
    auto it = ctx_->onnx_types.find(name);
    if (it != ctx_->onnx_types.end() && it->second.shape && *it->second.shape != c.dims)
      throw Error(
          fmt::format("{}: inconsistent shapes: '{}' (output {} of {}) is {} by ONNX "
                      "shape inference but {} when evaluated",
                      label_, name, i, ImportContext::label(n), shape_str(*it->second.shape),
                      shape_str(c.dims)));
    ctx_->constants[name] = c;
    std::vector<std::string> sources;
    for (const auto& in : n.input())
      if (!in.empty()) sources.push_back(in);
    trace_.record(name, c, std::move(sources));
  }
  ++result_.summary.folded;
  return true;
}

// Why a default-domain node's operator version is not one graphsub reads (operator_versions.h),
// or nullopt when it is.
std::optional<std::string> Importer::unread_form(const NodeProto& n) const {
  if (!default_domain(n.domain())) return std::nullopt;
  if (!keep_all_reason_.empty()) return keep_all_reason_;
  if (ctx_->opset < kMinConvertedOpset)
    return fmt::format("opset {} predates ONNX's broadcasting rules (opset {}): kept as written",
                       ctx_->opset, kMinConvertedOpset);
  auto version = onnx_operator_version(n.op_type(), ctx_->opset);
  if (!version)
    return fmt::format("ONNX {} has no operator {} at opset {}", ONNX_VERSION_STRING, n.op_type(),
                       ctx_->opset);
  if (reads_operator_version(n.op_type(), *version)) return std::nullopt;
  return fmt::format("{}-{} (the version at opset {}) is not a form graphsub reads", n.op_type(),
                     *version, ctx_->opset);
}

bool Importer::produces_runtime_value(const NodeProto& n) const {
  return std::any_of(n.output().begin(), n.output().end(),
                     [&](const std::string& o) { return runtime_.count(o) > 0; });
}

// Whether tensor `r` of the graph being built is computed from a graph input (not from
// weights alone, which the weight pre-computation folds into one weight of one shape).
bool computed_from_input(const Graph& g, TensorRef r) {
  std::vector<NodeId> todo{r.node};
  std::set<NodeId> seen;
  while (!todo.empty()) {
    NodeId id = todo.back();
    todo.pop_back();
    if (!seen.insert(id).second) continue;
    if (g.node(id).is_input()) return true;
    for (TensorRef in : g.node(id).inputs) todo.push_back(in.node);
  }
  return false;
}

// Evaluated tensors this node reads where the graph holds their value: every one an opaque
// node reads, those of a converted node except Reshape's target (derived again on export)
// and Expand's where it expands a tensor computed from an input (derived again where
// runtime_values finds that it can be; an expanded weight would be folded at one value).
void Importer::record_fixed_reads(const NodeProto& n, bool opaque) {
  bool expand = !opaque && n.op_type() == "Expand" && n.input_size() == 2 &&
                computed_from_input(ctx_->g, ctx_->input(n, 0));
  if (expand && ctx_->constants.count(n.input(1)))
    trace_.expand_reads[n.output(0)] = {n.input(1), ctx_->shape(ctx_->input(n, 0)),
                                        ctx_->shape(ctx_->tensors.at(n.output(0)))};
  for (int i = 0; i < n.input_size(); ++i)
    if (ctx_->constants.count(n.input(i)) &&
        (opaque || i != 1 || !(n.op_type() == "Reshape" || expand)))
      trace_.fixed_reads.insert(n.input(i));
}

void Importer::convert(const NodeProto& n, const std::string& node_name) {
  ctx_->node_name = node_name;
  std::string key = default_domain(n.domain()) ? n.op_type() : n.domain() + ":" + n.op_type();
  ++result_.summary.onnx_op_counts[key];
  bool runtime = produces_runtime_value(n);
  if (try_fold(n) && !runtime) return;
  for (const auto& in : n.input()) ensure_weight(in);
  for (int i = 0; i < n.input_size(); ++i)
    if (!n.input(i).empty() && !ctx_->tensors.count(n.input(i)))
      throw Error(fmt::format("{}: {} reads '{}', which is not defined", label_,
                              ImportContext::label(n), n.input(i)));
  if (runtime) {
    keep_opaque(n,
                "computes a value that follows a symbolic dimension: kept to compute it at "
                "run time");
    return;
  }
  // A value computed at run time is no constant to the converters, except as Reshape's
  // target, which the exporter derives again for every value of the dimension.
  ctx_->hidden.clear();
  for (int i = 0; i < n.input_size(); ++i)
    if (runtime_.count(n.input(i)) && !(n.op_type() == "Reshape" && i == 1))
      ctx_->hidden.insert(n.input(i));
  struct Unhide {
    ImportContext& c;
    ~Unhide() { c.hidden.clear(); }
  } unhide{*ctx_};
  Converter conv = default_domain(n.domain()) ? find_converter(n.op_type()) : nullptr;
  const RuntimeOperator* runtime_op =
      conv ? nullptr : find_runtime_operator(n.domain(), n.op_type());
  if (!conv && !runtime_op) {
    keep_opaque(n, default_domain(n.domain()) ? "no graphsub semantics for this operator"
                                              : fmt::format("operator of domain '{}'", n.domain()));
    return;
  }
  if (auto why = conv ? unread_form(n) : std::nullopt) {  // ONNX's versions, for ONNX's operators
    keep_opaque(n, *why);
    return;
  }
  try {
    bind_outputs(n, conv ? conv(*ctx_, n) : convert_runtime_operator(*ctx_, n, *runtime_op));
    record_fixed_reads(n, false);
  } catch (const Decline& d) {
    keep_opaque(n, d.reason);
  }
}

void Importer::add_outputs() {
  std::set<std::string> seen;
  for (const auto& vi : gp_.output()) {
    const std::string& name = vi.name();
    if (name.empty()) throw Error(fmt::format("{}: a graph output has no name", label_));
    if (!seen.insert(name).second)
      throw Error(fmt::format("{}: two graph outputs are named '{}'", label_, name));
    if (ctx_->constants.count(name)) trace_.fixed_reads.insert(name);
    ensure_weight(name);
    auto it = ctx_->tensors.find(name);
    if (it == ctx_->tensors.end())
      throw Error(fmt::format("{}: graph output '{}' is not produced by any node", label_, name));
    const TensorType& t = ctx_->type(it->second);
    OnnxValue v{.name = name, .elem_type = onnx_from_dtype(t.dtype), .shape = t.shape};
    if (vi.type().has_tensor_type()) {
      const auto& tt = vi.type().tensor_type();
      if (onnx_type_valid(tt.elem_type())) v.elem_type = tt.elem_type();
      if (tt.has_shape()) {
        if (tt.shape().dim_size() != static_cast<int>(t.shape.size()))
          throw Error(fmt::format("{}: graph output '{}' is declared with rank {} but is {}",
                                  label_, name, tt.shape().dim_size(), shape_str(t.shape)));
        for (const auto& d : tt.shape().dim())
          v.dim_params.push_back(d.has_dim_value() ? "" : d.dim_param());
      }
    }
    auto ot = ctx_->onnx_types.find(name);
    if (ot != ctx_->onnx_types.end() && onnx_type_valid(ot->second.elem_type))
      v.elem_type = ot->second.elem_type;
    ctx_->g.add_output(name, it->second);
    info_->outputs.push_back(std::move(v));
  }
  if (gp_.output_size() == 0) throw Error(fmt::format("{}: the graph has no outputs", label_));
}

ImportedModel Importer::run() {
  int64_t opset = check_opsets(m_, label_);
  inline_local_functions();
  read_info();
  ctx_ = std::make_unique<ImportContext>(result_.graph, *info_, result_.summary, opset);
  ctx_->slices_kept = slices_kept_;
  collect_initializers();
  widen_if_half();
  create_inputs();
  std::set<std::string> defined;
  for (const auto& [name, t] : ctx_->initializers) defined.insert(name);
  for (const auto& [name, r] : ctx_->tensors) defined.insert(name);
  for (const auto& o : gp_.output()) ctx_->used_names.insert(o.name());
  auto order = topological_nodes(gp_, defined, label_);
  for (const auto& node : gp_.node())
    for (const auto& in : node.input()) consumed_.insert(in);
  for (const auto& o : gp_.output()) consumed_.insert(o.name());
  for (const auto& node : gp_.node()) check_window_attributes(node);
  rep_.progress("import", 0, 0, "ONNX shape inference");
  infer_onnx_shapes(order);

  std::set<std::string> node_names;
  size_t done = 0;
  for (int i : order) {
    const NodeProto& n = gp_.node(i);
    std::string base = n.name().empty() ? fmt::format("{}_{}", n.op_type(), i) : n.name();
    std::string name = base;
    for (int k = 1; !node_names.insert(name).second; ++k) name = fmt::format("{}_{}", base, k);
    convert(n, name);
    rep_.progress("import", static_cast<double>(++done), static_cast<double>(order.size()),
                  n.op_type());
  }
  add_outputs();
  result_.graph.remove_dead();
  // The opaque nodes listed are those kept: one read only by a node converted around it (the
  // IsNaN of Where(IsNaN(x), 0, x)) went with the dead ones.
  std::set<std::string> kept;
  for (NodeId id = 0; id < result_.graph.num_slots(); ++id)
    if (result_.graph.alive(id) && result_.graph.node(id).op->cls == OpClass::Opaque)
      kept.insert(result_.graph.node(id).name);
  std::erase_if(result_.summary.opaque,
                [&](const OpaqueNodeInfo& o) { return !kept.count(o.name); });
  try {
    validate(result_.graph);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", label_, e.what()));
  }
  result_.info = info_;
  trace_.no_op_slices = ctx_->no_op_slices;
  return std::move(result_);
}

}  // namespace

std::vector<std::string> opaque_summary_lines(const ImportSummary& s) {
  std::map<std::pair<std::string, std::string>, int64_t> groups;  // (op, reason) -> count
  std::vector<std::pair<std::string, std::string>> first_seen;    // file order of groups
  for (const auto& o : s.opaque) {
    std::pair<std::string, std::string> key{
        o.domain.empty() ? o.op_type : o.domain + ":" + o.op_type, o.reason};
    if (groups[key]++ == 0) first_seen.push_back(key);
  }
  std::stable_sort(first_seen.begin(), first_seen.end(),
                   [&](const auto& a, const auto& b) { return groups[a] > groups[b]; });
  std::vector<std::string> lines;
  for (const auto& key : first_seen)
    lines.push_back(fmt::format("{} x {}: {}", groups[key], key.first, key.second));
  return lines;
}

StoredPrecision OnnxModelInfo::stored_precision() const {
  if (float_type == TensorProto::FLOAT16) return StoredPrecision::Float16;
  if (float_type == TensorProto::BFLOAT16) return StoredPrecision::BFloat16;
  return StoredPrecision::Float32;
}

int64_t OnnxModelInfo::opset() const {
  for (const auto& [domain, version] : opsets)
    if (domain.empty()) return version;
  return 0;
}

namespace {

// The symbolic dimensions of the inputs, with the values the import gave them.
std::vector<SymbolicDim> symbolic_dims_of(const OnnxModelInfo& info) {
  std::vector<SymbolicDim> dims;
  for (const auto& v : info.inputs)
    for (size_t d = 0; d < v.dim_params.size() && d < v.shape.size(); ++d) {
      const std::string& name = v.dim_params[d];
      if (name.empty() || std::any_of(dims.begin(), dims.end(),
                                      [&](const SymbolicDim& s) { return s.name == name; }))
        continue;
      // Another value, never the imported one; odd, so it rarely equals a fixed dimension.
      dims.push_back({.name = name, .value = v.shape[d], .alt = 2 * v.shape[d] + 1});
    }
  return dims;
}

// What import_model decided, after comparing imports at two values of each symbolic
// dimension, that a single import must not: values to compute at run time, and Slices that
// are no-ops at one of the values only, to keep.
struct ImportKeeps {
  std::set<std::string> runtime, slices;
};

// One import at the options' values, with `keeps`; its FoldTrace in `trace`.
ImportedModel import_once(std::string_view bytes, const std::string& base_dir,
                          const ImportOptions& opts, Reporter& rep, const std::string& label,
                          const std::string& source_file, const ImportKeeps& keeps,
                          FoldTrace* trace) {
  ModelProto m = parse_model(bytes, label);
  Importer importer(m, base_dir, opts, rep, label, source_file);
  importer.compute_at_run_time(keeps.runtime);
  importer.keep_slices(keeps.slices);
  ImportedModel r;
  try {
    r = importer.run();
  } catch (const Error& e) {
    const auto& dims = importer.defaulted_dims();
    if (dims.empty()) throw;
    throw Error(fmt::format(
        "{} (symbolic dimension{} {} set to {}, graphsub's default: where "
        "the model does not run at that value, give one with --dim "
        "NAME=VALUE)",
        e.what(), dims.size() == 1 ? "" : "s", fmt::join(dims, ", "), opts.default_dim));
  }
  if (trace) *trace = importer.fold_trace();
  return r;
}

// The options that import at the alternate value of `dim`.
ImportOptions at_alternate(const ImportOptions& opts, const OnnxModelInfo& info,
                           const SymbolicDim& dim) {
  ImportOptions alt = opts;
  alt.keep_symbolic = false;
  for (const auto& v : info.inputs) {
    Shape s = v.shape;
    for (size_t d = 0; d < v.dim_params.size() && d < s.size(); ++d)
      if (v.dim_params[d] == dim.name) s[d] = dim.alt;
    alt.input_shapes[v.name] = s;
  }
  return alt;
}

// import_onnx_bytes, with the file the bytes came from ("" for none) recorded in the info.
ImportedModel import_model(std::string_view bytes, const std::string& base_dir,
                           const ImportOptions& opts, Reporter& rep, const std::string& label,
                           const std::string& source_file) {
  FoldTrace base_trace;
  ImportedModel r = import_once(bytes, base_dir, opts, rep, label, source_file, {}, &base_trace);
  if (!opts.keep_symbolic) return r;
  auto dims = symbolic_dims_of(*r.info);
  if (dims.empty()) return r;
  // Imported again at another value of each symbolic dimension: which dimensions of each
  // tensor follow it is what the exporter needs to write them back symbolic. Where values
  // evaluated at import follow a dimension and the graph would hold them, both imports are
  // made again computing them at run time (runtime_values.h); Slices that copy their whole
  // input at one value and not at the other are kept in both.
  ImportKeeps keeps;
  constexpr int kPasses = 4;  // each pass can only add values; real models settle in one
  for (int pass = 0; pass < kPasses; ++pass) {
    auto info = std::make_shared<OnnxModelInfo>(*r.info);
    info->base_shapes = shapes_by_key(r.graph);
    r.alt_graphs.clear();
    std::vector<std::string> notes;
    ImportKeeps more;
    // An Expand's output axis that follows two symbolic dimensions (their product) is not
    // one the exporter writes anew: its target is computed at run time.
    std::map<std::string, std::set<size_t>> expand_axes;
    for (const SymbolicDim& dim : dims) {
      rep.progress("import", 0, 0, fmt::format("again at {}={}", dim.name, dim.alt));
      try {
        FoldTrace alt_trace;
        ImportedModel ra = import_once(bytes, base_dir, at_alternate(opts, *info, dim),
                                       null_reporter(), label, "", keeps, &alt_trace);
        for (const auto& name : runtime_values(base_trace, alt_trace, dim.value, dim.alt))
          if (!keeps.runtime.count(name)) more.runtime.insert(name);
        for (const auto& [out, b] : base_trace.expand_reads) {
          auto a = alt_trace.expand_reads.find(out);
          auto axes = a == alt_trace.expand_reads.end()
                          ? std::nullopt
                          : expand_axes_following(b, a->second, dim.value, dim.alt);
          for (size_t axis : axes ? *axes : std::vector<size_t>{})
            if (!expand_axes[out].insert(axis).second && !keeps.runtime.count(b.target))
              more.runtime.insert(b.target);
        }
        std::set_symmetric_difference(base_trace.no_op_slices.begin(),
                                      base_trace.no_op_slices.end(), alt_trace.no_op_slices.begin(),
                                      alt_trace.no_op_slices.end(),
                                      std::inserter(more.slices, more.slices.end()));
        info->symbolic.push_back(dim);
        info->alt_shapes.push_back(shapes_by_key(ra.graph));
        r.alt_graphs.push_back(std::move(ra.graph));
      } catch (const Error& e) {
        notes.push_back(
            fmt::format("symbolic dimension '{}' is written as {}: the model does not import at "
                        "{}={} ({})",
                        dim.name, dim.value, dim.name, dim.alt, e.what()));
      }
    }
    if ((more.runtime.empty() && more.slices.empty()) || pass == kPasses - 1) {
      r.summary.notes.insert(r.summary.notes.end(), notes.begin(), notes.end());
      r.info = info;
      return r;
    }
    keeps.runtime.insert(more.runtime.begin(), more.runtime.end());
    keeps.slices.insert(more.slices.begin(), more.slices.end());
    rep.progress("import", 0, 0,
                 fmt::format("again, {} shape values computed at run time, {} slices kept",
                             keeps.runtime.size(), keeps.slices.size()));
    r = import_once(bytes, base_dir, opts, rep, label, source_file, keeps, &base_trace);
  }
  return r;  // not reached: the last pass returns
}

}  // namespace

void prepare_onnx_import() {
  start_shape_inference();
}

ImportedModel import_onnx_bytes(std::string_view bytes, const std::string& base_dir,
                                const ImportOptions& opts, Reporter& rep,
                                const std::string& label) {
  start_shape_inference();
  return import_model(bytes, base_dir, opts, rep, label, "");
}

ImportedModel import_onnx_file(const std::string& path, const ImportOptions& opts, Reporter& rep) {
  start_shape_inference();  // before the file is read: the child shares none of it
  std::string bytes = read_binary_file(path, opts.max_file_bytes);
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  auto resolved = std::filesystem::canonical(path, ec);
  return import_model(bytes, dir, opts, rep, path, ec ? path : resolved.string());
}

}  // namespace graphsub
