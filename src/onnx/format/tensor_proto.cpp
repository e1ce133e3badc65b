#include "onnx/format/tensor_proto.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>

#include "core/error.h"
#include "onnx/format/model_io.h"

namespace graphsub {

using onnx::TensorProto;

DType dtype_from_onnx(int32_t e) {
  switch (e) {
    case TensorProto::FLOAT:
      return DType::F32;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
    case TensorProto::INT16:
    case TensorProto::UINT16:
      return DType::F16;
    case TensorProto::INT32:
      return DType::I32;
    case TensorProto::UINT32:
      return DType::U32;
    case TensorProto::BOOL:
    case TensorProto::UINT8:
    case TensorProto::INT8:
      return DType::Bool;
    default:
      return DType::I64;  // INT64, DOUBLE, UINT64 and others of 8 bytes or more
  }
}

int32_t onnx_from_dtype(DType t) {
  switch (t) {
    case DType::F32:
      return TensorProto::FLOAT;
    case DType::F16:
      return TensorProto::FLOAT16;
    case DType::I64:
      return TensorProto::INT64;
    case DType::I32:
      return TensorProto::INT32;
    case DType::U32:
      return TensorProto::UINT32;
    case DType::Bool:
      return TensorProto::BOOL;
  }
  return TensorProto::FLOAT;
}

bool onnx_type_valid(int32_t e) {
  return e != TensorProto::UNDEFINED && TensorProto::DataType_IsValid(e);
}

std::string onnx_type_name(int32_t e) {
  if (!TensorProto::DataType_IsValid(e)) return fmt::format("type#{}", e);
  return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(e));
}

Shape tensor_dims(const TensorProto& t, const std::string& what) {
  Shape s;
  for (int64_t d : t.dims()) {
    if (d < 0) throw Error(fmt::format("{}: negative dimension {} in its shape", what, d));
    s.push_back(d);
  }
  if (!checked_numel(s))
    throw Error(fmt::format("{}: shape {} has more than 2^60 elements, over graphsub's limit", what,
                            shape_str(s)));
  return s;
}

int64_t onnx_elem_size(int32_t e) {
  switch (e) {
    case TensorProto::BOOL:
    case TensorProto::UINT8:
    case TensorProto::INT8:
      return 1;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
    case TensorProto::INT16:
    case TensorProto::UINT16:
      return 2;
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32:
      return 4;
    case TensorProto::INT64:
    case TensorProto::UINT64:
    case TensorProto::DOUBLE:
    case TensorProto::COMPLEX64:
      return 8;
    case TensorProto::COMPLEX128:
      return 16;
    default:
      return 0;  // strings and types without a fixed size
  }
}

static size_t element_count(const TensorProto& t, const std::string& what) {
  return static_cast<size_t>(numel(tensor_dims(t, what)));
}

template <class T>
static std::vector<T> from_raw(const TensorProto& t, size_t n, const std::string& what) {
  const std::string& raw = t.raw_data();
  // n <= 2^60 (tensor_dims), so n * sizeof(T) <= 2^63 fits in size_t.
  if (raw.size() != n * sizeof(T))
    throw Error(fmt::format("{}: raw data holds {} bytes, its shape {} needs {}", what, raw.size(),
                            shape_str(tensor_dims(t, what)), n * sizeof(T)));
  std::vector<T> v(n);
  if (n) std::memcpy(v.data(), raw.data(), n * sizeof(T));  // ONNX raw data is little-endian
  return v;
}

static void check_count(size_t got, size_t want, const TensorProto& t, const std::string& what) {
  if (got != want)
    throw Error(fmt::format("{}: holds {} values, its shape {} needs {}", what, got,
                            shape_str(tensor_dims(t, what)), want));
}

std::vector<float> tensor_floats(const TensorProto& t, const std::string& what) {
  if (t.data_type() != TensorProto::FLOAT)
    throw Error(
        fmt::format("{}: expected FLOAT data, got {}", what, onnx_type_name(t.data_type())));
  if (t.data_location() == TensorProto::EXTERNAL)
    throw Error(fmt::format("{}: external data was not loaded", what));
  size_t n = element_count(t, what);
  if (t.has_raw_data()) return from_raw<float>(t, n, what);
  check_count(static_cast<size_t>(t.float_data_size()), n, t, what);
  return {t.float_data().begin(), t.float_data().end()};
}

std::vector<int64_t> tensor_ints(const TensorProto& t, const std::string& what) {
  if (t.data_location() == TensorProto::EXTERNAL)
    throw Error(fmt::format("{}: external data was not loaded", what));
  size_t n = element_count(t, what);
  if (t.data_type() == TensorProto::INT64) {
    if (t.has_raw_data()) return from_raw<int64_t>(t, n, what);
    check_count(static_cast<size_t>(t.int64_data_size()), n, t, what);
    return {t.int64_data().begin(), t.int64_data().end()};
  }
  if (t.data_type() == TensorProto::INT32) {
    if (t.has_raw_data()) {
      auto v = from_raw<int32_t>(t, n, what);
      return {v.begin(), v.end()};
    }
    check_count(static_cast<size_t>(t.int32_data_size()), n, t, what);
    return {t.int32_data().begin(), t.int32_data().end()};
  }
  throw Error(
      fmt::format("{}: expected INT64 or INT32 data, got {}", what, onnx_type_name(t.data_type())));
}

TensorProto make_float_tensor(const std::string& name, const Shape& shape,
                              std::span<const float> values) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::FLOAT);
  for (int64_t d : shape) t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size_bytes()));
  return t;
}

TensorProto make_int64_tensor(const std::string& name, const Shape& shape,
                              std::span<const int64_t> values) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::INT64);
  for (int64_t d : shape) t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size_bytes()));
  return t;
}

TensorProto make_int32_tensor(const std::string& name, const Shape& shape,
                              std::span<const int64_t> values) {
  std::vector<int32_t> narrow;
  for (int64_t v : values) {
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      throw Error(fmt::format("tensor '{}': {} does not fit int32", name, v));
    narrow.push_back(static_cast<int32_t>(v));
  }
  TensorProto t;
  t.set_name(name);
  t.set_data_type(TensorProto::INT32);
  for (int64_t d : shape) t.add_dims(d);
  t.set_raw_data(
      std::string(reinterpret_cast<const char*>(narrow.data()), narrow.size() * sizeof(int32_t)));
  return t;
}

TensorProto make_float_scalar(const std::string& name, float v) {
  return make_float_tensor(name, {}, std::span<const float>(&v, 1));
}

std::string resolve_external_location(const std::string& location, const std::string& base_dir,
                                      const std::string& what) {
  namespace fs = std::filesystem;
  fs::path rel(location);
  if (location.empty() || rel.is_absolute() ||
      std::any_of(rel.begin(), rel.end(), [](const fs::path& p) { return p == ".."; }))
    throw Error(
        fmt::format("{}: external data location '{}' must be a relative path below the "
                    "model's folder",
                    what, location));
  // The spelling is not enough: a symlink (the file or a folder on the way) may point
  // anywhere. Both sides are resolved and the file must still lie below the folder.
  std::error_code ec;
  fs::path base = fs::canonical(base_dir, ec);
  if (ec)
    throw Error(fmt::format("{}: cannot resolve the model's folder '{}': {}", what, base_dir,
                            ec.message()));
  fs::path file = fs::canonical(base / rel, ec);
  if (ec)
    throw Error(fmt::format("{}: external data file '{}' (location '{}'): {}", what,
                            (fs::path(base_dir) / rel).string(), location, ec.message()));
  auto inside = file.lexically_relative(base);
  if (inside.empty() || *inside.begin() == ".." || inside == ".")
    throw Error(
        fmt::format("{}: external data location '{}' resolves to '{}', outside the model's "
                    "folder '{}' (through a symbolic link)",
                    what, location, file.string(), base.string()));
  return file.string();
}

std::string inline_external_data(TensorProto& t, const std::string& base_dir) {
  if (t.data_location() != TensorProto::EXTERNAL) return "";
  std::string what = fmt::format("initializer '{}'", t.name());
  if (base_dir.empty())
    throw Error(
        fmt::format("{}: stored as external data, but the model was not read from a file", what));
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      size_t used = 0;
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        offset = std::stoll(kv.value(), &used);
      else if (kv.key() == "length")
        length = std::stoll(kv.value(), &used);
      if (used && used != kv.value().size()) throw std::invalid_argument("trailing characters");
    } catch (const std::exception&) {
      throw Error(fmt::format("{}: external data entry '{}' has a bad value '{}'", what, kv.key(),
                              kv.value()));
    }
  }
  if (offset < 0 || length < -1)
    throw Error(fmt::format("{}: external data offset {} and length {} must not be negative", what,
                            offset, length));
  // The shape says how many bytes the tensor holds: checked before anything is allocated,
  // so a huge length in a small file's header cannot make graphsub read gigabytes.
  Shape dims = tensor_dims(t, what);
  int64_t elem = onnx_elem_size(t.data_type());
  if (elem == 0)
    throw Error(fmt::format("{}: external data of element type {} is not supported", what,
                            onnx_type_name(t.data_type())));
  auto want = checked_mul(numel(dims), elem);
  if (!want || (length >= 0 && length != *want))
    throw Error(
        fmt::format("{}: external data length {} does not match its shape {} of {} ({} "
                    "bytes)",
                    what, length, shape_str(dims), onnx_type_name(t.data_type()),
                    want ? fmt::format("{}", *want) : std::string("too many")));
  std::string file = resolve_external_location(location, base_dir, what);
  std::string bytes = read_file_range(file, offset, *want, what);
  t.set_raw_data(std::move(bytes));
  t.clear_external_data();
  t.set_data_location(TensorProto::DEFAULT);
  return file;
}

int64_t tensor_byte_size(const TensorProto& t) {
  if (t.has_raw_data()) return static_cast<int64_t>(t.raw_data().size());
  return static_cast<int64_t>(t.ByteSizeLong());
}

}  // namespace graphsub
