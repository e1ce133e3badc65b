#include "onnx/import/import_context.h"

#include <fmt/format.h>

#include "core/error.h"
#include "onnx/format/tensor_proto.h"

namespace graphsub {

std::string ImportContext::label(const onnx::NodeProto& n) {
  return node_label(n);
}

using onnx::AttributeProto;

// ---- NodeAttrs ----

// ---- ImportContext ----

std::string ImportContext::input_name(const onnx::NodeProto& n, int i) {
  if (i >= 0 && i < n.input_size()) return n.input(i);
  return fmt::format("<input {} not given>", i);
}

TensorRef ImportContext::input(const onnx::NodeProto& n, int i) {
  if (!has_input(n, i)) throw Error(fmt::format("{}: required input {} is missing", label(n), i));
  auto it = tensors.find(n.input(i));
  if (it == tensors.end())
    throw Error(fmt::format("{}: input '{}' is not defined", label(n), n.input(i)));
  return it->second;
}

TensorRef ImportContext::data(const onnx::NodeProto& n, int i) {
  TensorRef r = input(n, i);
  if (type(r).dtype != DType::F32) {
    auto t = onnx_types.find(n.input(i));
    int32_t et = t != onnx_types.end() ? t->second.elem_type : onnx_from_dtype(type(r).dtype);
    // No tensor name in the reason: the summary groups opaque nodes by op type and reason.
    throw Decline{
        fmt::format("an input is {}; graphsub's operators compute on FLOAT (a model "
                    "that is FLOAT16 or BFLOAT16 throughout is computed as FLOAT)",
                    onnx_type_name(et))};
  }
  return r;
}

std::optional<std::vector<int64_t>> ImportContext::const_ints(const onnx::NodeProto& n, int i) {
  if (!has_input(n, i)) return std::nullopt;
  if (const HostConstant* c = constant(n.input(i))) {
    if (c->real()) return std::nullopt;
    return c->ints;
  }
  auto t = tensors.find(n.input(i));
  if (t == tensors.end()) return std::nullopt;
  auto it = int_values.find(t->second.node);
  if (it == int_values.end()) return std::nullopt;
  return it->second;
}

const std::vector<float>* ImportContext::const_floats(TensorRef r) const {
  const Node& node = g.node(r.node);
  return node.is_weight() && node.data ? node.data.get() : nullptr;
}

std::optional<Shape> ImportContext::inferred_shape(const onnx::NodeProto& n, int i) const {
  if (i >= n.output_size()) return std::nullopt;
  auto it = onnx_types.find(n.output(i));
  if (it == onnx_types.end()) return std::nullopt;
  return it->second.shape;
}

TensorRef ImportContext::op(const onnx::NodeProto& n, std::string_view op,
                            std::vector<TensorRef> in, Attrs attrs) {
  try {
    return {g.add(op, std::move(in), std::move(attrs), node_name), 0};
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", label(n), e.what()));
  }
}

std::vector<TensorRef> ImportContext::op_multi(const onnx::NodeProto& n, std::string_view op,
                                               std::vector<TensorRef> in, Attrs attrs) {
  NodeId id;
  try {
    id = g.add(op, std::move(in), std::move(attrs), node_name);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", label(n), e.what()));
  }
  std::vector<TensorRef> outs;
  for (uint32_t k = 0; k < g.node(id).outputs.size(); ++k) outs.push_back({id, k});
  return outs;
}

std::string ImportContext::unique_name(const std::string& base) {
  std::string name = base;
  for (int k = 1; used_names.count(name); ++k) name = fmt::format("{}_{}", base, k);
  used_names.insert(name);
  return name;
}

TensorRef ImportContext::float_weight(const std::string& base, Shape shape,
                                      std::vector<float> values) {
  TensorType t;
  t.shape = std::move(shape);
  auto data = std::make_shared<const std::vector<float>>(std::move(values));
  return {g.add_weight(unique_name(base), std::move(t), std::move(data)), 0};
}

TensorRef ImportContext::int_weight(const std::string& base, Shape shape,
                                    std::vector<int64_t> values) {
  std::string name = unique_name(base);
  info.raw_initializers[name] = make_int64_tensor(name, shape, values).SerializeAsString();
  TensorType t;
  t.dtype = DType::I64;
  t.shape = std::move(shape);
  NodeId id = g.add_weight(name, std::move(t));
  int_values[id] = std::move(values);
  return {id, 0};
}

const HostConstant* ImportContext::constant(const std::string& name) {
  return hidden.count(name) ? nullptr : known_value(name);
}

const HostConstant* ImportContext::known_value(const std::string& name) {
  auto it = constants.find(name);
  if (it != constants.end()) return &it->second;
  auto init = initializers.find(name);
  if (init == initializers.end()) return nullptr;
  const onnx::TensorProto& t = *init->second;
  // Large float initializers are weights, not shape computations: never copied here.
  int64_t count = numel(tensor_dims(t, name));
  if (t.data_type() == onnx::TensorProto::FLOAT && count > kMaxFoldedFloats) return nullptr;
  auto c = host_constant(t, fmt::format("initializer '{}'", name));
  if (!c) return nullptr;
  return &constants.emplace(name, std::move(*c)).first->second;
}

TensorRef ImportContext::materialize(const std::string& name) {
  auto done = tensors.find(name);
  if (done != tensors.end()) return done->second;
  const HostConstant& c = constants.at(name);
  TensorRef r;
  if (c.elem_type == onnx::TensorProto::FLOAT) {
    r = float_weight(name, c.dims, std::vector<float>(c.reals.begin(), c.reals.end()));
  } else {
    // Other element types keep their exact ONNX type in the written initializer.
    std::string unique = unique_name(name);
    info.raw_initializers[unique] = to_tensor_proto(c, unique).SerializeAsString();
    TensorType t;
    t.dtype = dtype_from_onnx(c.elem_type);
    t.shape = c.dims;
    NodeId id = g.add_weight(unique, std::move(t));
    if (!c.real()) int_values[id] = c.ints;
    r = {id, 0};
  }
  tensors[name] = r;
  return r;
}

Converter find_converter(const std::string& op_type) {
  static const std::map<std::string, Converter> table = [] {
    std::map<std::string, Converter> t;
    add_math_converters(t);
    add_nn_converters(t);
    add_shape_converters(t);
    return t;
  }();
  auto it = table.find(op_type);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace graphsub
