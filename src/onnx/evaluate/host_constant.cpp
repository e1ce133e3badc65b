// Host constants: the evaluator's tensors, read from and written as ONNX tensors.
#include <fmt/format.h>

#include <cstring>

#include "core/error.h"
#include "onnx/evaluate/node_evaluator.h"
#include "onnx/format/tensor_proto.h"

namespace graphsub {

using evaluate::fit_int;
using evaluate::fit_real;
using evaluate::int_type;
using evaluate::kMaxFoldedElements;
using evaluate::real_type;
using onnx::TensorProto;

bool HostConstant::real() const {
  return real_type(elem_type);
}

bool host_type_supported(int32_t elem_type) {
  return real_type(elem_type) || int_type(elem_type);
}

std::optional<HostConstant> host_constant(const TensorProto& t, const std::string& what) {
  if (!host_type_supported(t.data_type()) || t.data_location() == TensorProto::EXTERNAL)
    return std::nullopt;
  HostConstant c;
  c.elem_type = t.data_type();
  c.dims = tensor_dims(t, what);
  if (c.numel() > kMaxFoldedElements) return std::nullopt;
  size_t n = static_cast<size_t>(c.numel());
  auto bad = [&] {
    return Error(fmt::format("{}: holds a different number of values than its shape {} needs", what,
                             shape_str(c.dims)));
  };
  switch (t.data_type()) {
    case TensorProto::FLOAT: {
      for (float v : tensor_floats(t, what)) c.reals.push_back(v);
      return c;
    }
    case TensorProto::INT64:
    case TensorProto::INT32:
      c.ints = tensor_ints(t, what);
      return c;
    case TensorProto::DOUBLE: {
      if (t.has_raw_data()) {
        if (t.raw_data().size() != n * sizeof(double)) throw bad();
        c.reals.resize(n);
        std::memcpy(c.reals.data(), t.raw_data().data(), n * sizeof(double));
      } else {
        c.reals.assign(t.double_data().begin(), t.double_data().end());
      }
      break;
    }
    default: {  // small integers and bool: raw bytes or int32_data
      size_t width = t.data_type() == TensorProto::UINT32 ? 4
                     : t.data_type() == TensorProto::INT16 || t.data_type() == TensorProto::UINT16
                         ? 2
                         : 1;
      if (t.has_raw_data()) {
        if (t.raw_data().size() != n * width) throw bad();
        for (size_t k = 0; k < n; ++k) {
          uint64_t bits = 0;
          std::memcpy(&bits, t.raw_data().data() + k * width, width);
          int64_t v = static_cast<int64_t>(bits);
          if (t.data_type() == TensorProto::INT16) v = static_cast<int16_t>(bits);
          if (t.data_type() == TensorProto::INT8) v = static_cast<int8_t>(bits);
          c.ints.push_back(fit_int(v, t.data_type()));
        }
      } else if (t.data_type() == TensorProto::UINT32) {
        for (uint64_t v : t.uint64_data())
          c.ints.push_back(fit_int(static_cast<int64_t>(v), TensorProto::UINT32));
      } else {
        for (int32_t v : t.int32_data()) c.ints.push_back(fit_int(v, t.data_type()));
      }
    }
  }
  if ((c.real() ? c.reals.size() : c.ints.size()) != n) throw bad();
  return c;
}

TensorProto to_tensor_proto(const HostConstant& c, const std::string& name) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(c.elem_type);
  for (int64_t d : c.dims) t.add_dims(d);
  switch (c.elem_type) {
    case TensorProto::FLOAT:
      for (double v : c.reals) t.add_float_data(static_cast<float>(v));
      break;
    case TensorProto::DOUBLE:
      for (double v : c.reals) t.add_double_data(v);
      break;
    case TensorProto::INT64:
      for (int64_t v : c.ints) t.add_int64_data(v);
      break;
    case TensorProto::UINT32:
      for (int64_t v : c.ints) t.add_uint64_data(static_cast<uint64_t>(v));
      break;
    default:  // INT32, INT16, INT8, UINT16, UINT8, BOOL are stored in int32_data
      for (int64_t v : c.ints) t.add_int32_data(static_cast<int32_t>(v));
  }
  return t;
}

}  // namespace graphsub
