#include "onnx/format/opaque_attrs.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"

namespace graphsub {

using onnx::AttributeProto;

static bool reserved(const std::string& name) {
  return name == "op_type" || name == "domain" || name.rfind("onnx_", 0) == 0;
}

static std::string to_hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    s.push_back(digits[c >> 4]);
    s.push_back(digits[c & 15]);
  }
  return s;
}

static std::string from_hex(const std::string& hex) {
  auto val = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (hex.size() % 2) throw Error("opaque node: malformed onnx_extra attribute");
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = val(hex[2 * i]), lo = val(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) throw Error("opaque node: malformed onnx_extra attribute");
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return out;
}

Attrs encode_opaque_attrs(const onnx::NodeProto& n) {
  Attrs a;
  a.set("op_type", n.op_type());
  a.set("domain", n.domain() == "ai.onnx" ? std::string() : n.domain());
  onnx::NodeProto extra;
  for (const AttributeProto& at : n.attribute()) {
    if (reserved(at.name()) || !at.ref_attr_name().empty() || a.has(at.name())) {
      *extra.add_attribute() = at;
      continue;
    }
    switch (at.type()) {
      case AttributeProto::INT:
        a.set(at.name(), at.i());
        break;
      case AttributeProto::FLOAT:
        a.set(at.name(), static_cast<double>(at.f()));
        break;
      case AttributeProto::STRING:
        a.set(at.name(), at.s());
        break;
      case AttributeProto::INTS:
        a.set(at.name(), std::vector<int64_t>(at.ints().begin(), at.ints().end()));
        break;
      default:
        *extra.add_attribute() = at;
    }
  }
  // Name order, as decode writes them, so that import -> export -> import is a fixed point.
  std::stable_sort(
      extra.mutable_attribute()->begin(), extra.mutable_attribute()->end(),
      [](const AttributeProto& x, const AttributeProto& y) { return x.name() < y.name(); });
  if (extra.attribute_size()) a.set(kOpaqueExtra, to_hex(extra.SerializeAsString()));
  std::vector<int64_t> absent_in, absent_out;
  for (int i = 0; i < n.input_size(); ++i)
    if (n.input(i).empty()) absent_in.push_back(i);
  for (int i = 0; i < n.output_size(); ++i)
    if (n.output(i).empty()) absent_out.push_back(i);
  if (!absent_in.empty()) a.set(kOpaqueAbsentIn, absent_in);
  if (!absent_out.empty()) a.set(kOpaqueAbsentOut, absent_out);
  return a;
}

void decode_opaque_attrs(const Attrs& a, onnx::NodeProto& out) {
  out.set_op_type(a.s("op_type"));
  if (a.has("domain") && !a.s("domain").empty()) out.set_domain(a.s("domain"));
  onnx::NodeProto extra;
  if (a.has(kOpaqueExtra) && !extra.ParseFromString(from_hex(a.s(kOpaqueExtra))))
    throw Error("opaque node: malformed onnx_extra attribute");
  // Native and serialized attributes, merged in name order (deterministic output).
  std::vector<AttributeProto> all(extra.attribute().begin(), extra.attribute().end());
  for (const auto& [name, v] : a.items()) {
    if (reserved(name)) continue;
    AttributeProto at;
    at.set_name(name);
    switch (attr_kind(v)) {
      case AttrKind::Int:
        at.set_type(AttributeProto::INT);
        at.set_i(std::get<int64_t>(v));
        break;
      case AttrKind::Float:
        at.set_type(AttributeProto::FLOAT);
        at.set_f(static_cast<float>(std::get<double>(v)));
        break;
      case AttrKind::String:
        at.set_type(AttributeProto::STRING);
        at.set_s(std::get<std::string>(v));
        break;
      case AttrKind::Ints:
        at.set_type(AttributeProto::INTS);
        for (int64_t x : std::get<std::vector<int64_t>>(v)) at.add_ints(x);
        break;
    }
    all.push_back(std::move(at));
  }
  std::stable_sort(all.begin(), all.end(), [](const AttributeProto& x, const AttributeProto& y) {
    return x.name() < y.name();
  });
  for (auto& at : all) *out.add_attribute() = std::move(at);
}

std::vector<int64_t> absent_positions(const Attrs& a, const char* key) {
  return a.has(key) ? a.ints(key) : std::vector<int64_t>{};
}

}  // namespace graphsub
