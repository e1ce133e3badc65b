#include "onnx/format/half_precision.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"

namespace graphsub {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::NodeProto;
using onnx::TensorProto;

namespace {

// ---- bit patterns (IEEE 754 binary16 and bfloat16), round to nearest even ----

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t float_to_half(float f) {
  uint32_t b = std::bit_cast<uint32_t>(f);
  auto sign = static_cast<uint16_t>((b >> 16) & 0x8000u);
  uint32_t exp = (b >> 23) & 0xffu, mant = b & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow: infinity
  if (e <= 0) {                                                 // subnormal half or zero
    if (e < -10) return sign;
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t h = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13), rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent
  return static_cast<uint16_t>(sign | h);
}

float bfloat16_to_float(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

uint16_t float_to_bfloat16(float f) {
  if (std::isnan(f)) return 0x7fc0;
  uint32_t b = std::bit_cast<uint32_t>(f);
  return static_cast<uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

float from_bits(uint16_t h, int32_t half) {
  return half == TensorProto::FLOAT16 ? half_to_float(h) : bfloat16_to_float(h);
}
uint16_t to_bits(float f, int32_t half) {
  return half == TensorProto::FLOAT16 ? float_to_half(f) : float_to_bfloat16(f);
}

bool is_half(int32_t t) {
  return t == TensorProto::FLOAT16 || t == TensorProto::BFLOAT16;
}

// ---- walking a model: every place that names an element type ----

// Operands ONNX requires as float32 whatever the model's type: (op_type, input index).
bool float32_operand(const std::string& op, int index) {
  return (op == "Resize" && index == 2) || (op == "Upsample" && index == 1);
}

// Names read as such an operand somewhere in the graph (left as FLOAT in both directions).
std::set<std::string> float32_operands(const GraphProto& g) {
  std::set<std::string> names;
  for (const auto& n : g.node())
    for (int i = 0; i < n.input_size(); ++i)
      if (float32_operand(n.op_type(), i)) names.insert(n.input(i));
  return names;
}

struct TypeVisitor {
  // Called with each element type slot (value infos, Cast targets) and each tensor.
  std::function<void(int32_t&)> type_slot;
  std::function<void(TensorProto&)> tensor;

  void graph(GraphProto& g) {
    std::set<std::string> keep = float32_operands(g);
    for (auto& t : *g.mutable_initializer())
      if (!keep.count(t.name())) tensor(t);
    for (auto* list : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()})
      for (auto& vi : *list) {
        if (keep.count(vi.name()) || !vi.type().has_tensor_type()) continue;
        auto* tt = vi.mutable_type()->mutable_tensor_type();
        int32_t e = tt->elem_type();
        type_slot(e);
        tt->set_elem_type(e);
      }
    for (auto& n : *g.mutable_node()) node(n, keep);
  }

  void node(NodeProto& n, const std::set<std::string>& keep) {
    bool kept_output = false;
    for (const auto& o : n.output()) kept_output = kept_output || keep.count(o) > 0;
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_t() && !kept_output) tensor(*a.mutable_t());
      if (n.op_type() == "Cast" && a.name() == "to" && !kept_output) {
        auto e = static_cast<int32_t>(a.i());
        type_slot(e);
        a.set_i(e);
      }
      if (a.has_g()) graph(*a.mutable_g());
      for (auto& sub : *a.mutable_graphs()) graph(sub);
    }
  }
};

// The values of a half-typed tensor (raw_data or int32_data holding the bit patterns).
std::vector<uint16_t> half_bits(const TensorProto& t) {
  std::vector<uint16_t> bits;
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() % 2)
      throw Error(fmt::format("tensor '{}': raw data of {} bytes is not 16-bit values", t.name(),
                              raw.size()));
    bits.resize(raw.size() / 2);
    if (!bits.empty()) std::memcpy(bits.data(), raw.data(), raw.size());  // little-endian
  } else {
    for (int32_t v : t.int32_data()) bits.push_back(static_cast<uint16_t>(v));
  }
  return bits;
}

}  // namespace

float round_to_half(float v, int32_t half) {
  return from_bits(to_bits(v, half), half);
}

namespace {

// Every element type a graph names (read-only twin of TypeVisitor).
void collect_types(const GraphProto& g, std::set<int32_t>& seen) {
  std::set<std::string> keep = float32_operands(g);
  for (const auto& t : g.initializer())
    if (!keep.count(t.name())) seen.insert(t.data_type());
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
    for (const auto& vi : *list)
      if (!keep.count(vi.name()) && vi.type().has_tensor_type())
        seen.insert(vi.type().tensor_type().elem_type());
  for (const auto& n : g.node()) {
    bool kept_output = false;
    for (const auto& o : n.output()) kept_output = kept_output || keep.count(o) > 0;
    for (const auto& a : n.attribute()) {
      if (a.has_t() && !kept_output) seen.insert(a.t().data_type());
      if (n.op_type() == "Cast" && a.name() == "to" && !kept_output)
        seen.insert(static_cast<int32_t>(a.i()));
      // Constant's value_float(s) are float32 values.
      if (n.op_type() == "Constant" && (a.name() == "value_float" || a.name() == "value_floats"))
        seen.insert(TensorProto::FLOAT);
      if (a.has_g()) collect_types(a.g(), seen);
      for (const auto& sub : a.graphs()) collect_types(sub, seen);
    }
  }
}

}  // namespace

int32_t uniform_half_type(const onnx::ModelProto& m) {
  std::set<int32_t> seen;
  collect_types(m.graph(), seen);
  bool f16 = seen.count(TensorProto::FLOAT16), bf16 = seen.count(TensorProto::BFLOAT16);
  if (f16 == bf16 || seen.count(TensorProto::FLOAT) || seen.count(TensorProto::DOUBLE))
    return TensorProto::FLOAT;
  return f16 ? TensorProto::FLOAT16 : TensorProto::BFLOAT16;
}

void widen_half_model(onnx::ModelProto& m, int32_t half) {
  TypeVisitor v{
      .type_slot =
          [&](int32_t& e) {
            if (e == half) e = TensorProto::FLOAT;
          },
      .tensor =
          [&](TensorProto& t) {
            if (t.data_type() != half) return;
            if (t.data_location() == TensorProto::EXTERNAL)
              throw Error(fmt::format("tensor '{}': external data not read", t.name()));
            std::vector<uint16_t> bits = half_bits(t);
            std::string raw(bits.size() * sizeof(float), '\0');
            for (size_t i = 0; i < bits.size(); ++i) {
              float f = from_bits(bits[i], half);
              std::memcpy(raw.data() + i * sizeof(float), &f, sizeof f);
            }
            t.clear_int32_data();
            t.set_data_type(TensorProto::FLOAT);
            t.set_raw_data(std::move(raw));
          },
  };
  v.graph(*m.mutable_graph());
}

void narrow_to_half(onnx::ModelProto& m, int32_t half) {
  if (!is_half(half)) return;
  TypeVisitor v{
      .type_slot =
          [&](int32_t& e) {
            if (e == TensorProto::FLOAT) e = half;
          },
      .tensor =
          [&](TensorProto& t) {
            if (t.data_type() != TensorProto::FLOAT) return;
            std::vector<float> values;
            if (t.has_raw_data()) {
              values.resize(t.raw_data().size() / sizeof(float));
              if (!values.empty())
                std::memcpy(values.data(), t.raw_data().data(), values.size() * sizeof(float));
            } else {
              values.assign(t.float_data().begin(), t.float_data().end());
            }
            std::string raw(values.size() * 2, '\0');
            for (size_t i = 0; i < values.size(); ++i) {
              uint16_t b = to_bits(values[i], half);
              std::memcpy(raw.data() + i * 2, &b, 2);
            }
            t.clear_float_data();
            t.set_data_type(half);
            t.set_raw_data(std::move(raw));
          },
  };
  v.graph(*m.mutable_graph());
}

}  // namespace graphsub
