#include "onnx/format/node_attrs.h"

#include <fmt/format.h>

#include "core/error.h"

namespace graphsub {

using onnx::AttributeProto;

std::string node_label(const onnx::NodeProto& n) {
  std::string dom = n.domain().empty() || n.domain() == "ai.onnx" ? "" : n.domain() + ":";
  return fmt::format("node '{}' ({}{})", n.name(), dom, n.op_type());
}

const AttributeProto* NodeAttrs::find(const std::string& name) const {
  for (const auto& a : n_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

const AttributeProto& NodeAttrs::typed(const std::string& name, int type) const {
  const AttributeProto* a = find(name);
  if (a->type() != type)
    throw Error(fmt::format(
        "{}: attribute '{}' must be {}, got {}", label_, name,
        AttributeProto::AttributeType_Name(static_cast<AttributeProto::AttributeType>(type)),
        AttributeProto::AttributeType_IsValid(a->type())
            ? AttributeProto::AttributeType_Name(a->type())
            : fmt::format("type#{}", static_cast<int>(a->type()))));
  return *a;
}

int64_t NodeAttrs::i(const std::string& name, int64_t def) const {
  return has(name) ? typed(name, AttributeProto::INT).i() : def;
}

float NodeAttrs::f(const std::string& name, float def) const {
  return has(name) ? typed(name, AttributeProto::FLOAT).f() : def;
}

std::string NodeAttrs::s(const std::string& name, const std::string& def) const {
  return has(name) ? typed(name, AttributeProto::STRING).s() : def;
}

std::vector<int64_t> NodeAttrs::ints(const std::string& name, std::vector<int64_t> def) const {
  if (!has(name)) return def;
  const auto& a = typed(name, AttributeProto::INTS);
  return {a.ints().begin(), a.ints().end()};
}

std::vector<float> NodeAttrs::floats(const std::string& name, std::vector<float> def) const {
  if (!has(name)) return def;
  const auto& a = typed(name, AttributeProto::FLOATS);
  return {a.floats().begin(), a.floats().end()};
}

const onnx::TensorProto* NodeAttrs::tensor(const std::string& name) const {
  return has(name) ? &typed(name, AttributeProto::TENSOR).t() : nullptr;
}

int64_t onnx_axis(const onnx::NodeProto& n, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    throw Error(fmt::format("{}: axis {} is out of range for rank {}", node_label(n), axis, rank));
  return axis < 0 ? axis + rank : axis;
}

}  // namespace graphsub
