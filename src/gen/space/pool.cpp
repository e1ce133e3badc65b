#include "gen/space/pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "ir/hash.h"

namespace graphsub::gen {

const char* role_name(Role r) {
  switch (r) {
    case Role::Data:
      return "data";
    case Role::Weight:
      return "weight";
    case Role::Scalar:
      return "scalar";
  }
  return "?";
}

std::vector<PoolTensor> default_pool() {
  return {
      {"x1", {2, 4}, Role::Data},         {"x2", {2, 4}, Role::Data},
      {"x3", {2, 4}, Role::Data},         {"w1", {4, 4}, Role::Weight},
      {"w2", {4, 4}, Role::Weight},       {"w3", {4, 4}, Role::Weight},
      {"i1", {2, 2, 5, 5}, Role::Data},   {"i2", {2, 2, 5, 5}, Role::Data},
      {"k1", {2, 2, 3, 3}, Role::Weight}, {"k2", {2, 2, 3, 3}, Role::Weight},
      {"e1", {2, 2, 1, 3}, Role::Weight}, {"e2", {2, 2, 1, 3}, Role::Weight},
      {"d1", {2, 1, 3, 3}, Role::Weight}, {"s1", {}, Role::Scalar},
  };
}

std::vector<PoolTensor> parse_pool(const std::string& spec) {
  std::vector<PoolTensor> pool;
  std::stringstream entries(spec);
  std::string entry;
  while (std::getline(entries, entry, ',')) {
    std::vector<std::string> parts;
    std::stringstream fields(entry);
    std::string f;
    while (std::getline(fields, f, ':')) parts.push_back(f);
    auto bad = [&](const std::string& why) {
      return Error(fmt::format(
          "pool entry '{}': {} (expected name:DIMSxDIMS:role[:DIMSxDIMS] or name:scalar)", entry,
          why));
    };
    auto dims_of = [&](const std::string& field) {
      Shape shape;
      std::stringstream dims(field);
      std::string d;
      while (std::getline(dims, d, 'x')) {
        try {
          size_t used = 0;
          long v = std::stol(d, &used);
          if (used != d.size() || v < 1 || v > 64) throw bad("dimension out of range 1..64");
          shape.push_back(v);
        } catch (const std::logic_error&) {
          throw bad(fmt::format("bad dimension '{}'", d));
        }
      }
      return shape;
    };
    if (parts.size() == 2 && parts[1] == "scalar") {
      pool.push_back({parts[0], {}, Role::Scalar});
      continue;
    }
    if (parts.size() != 3 && parts.size() != 4) throw bad("wrong number of fields");
    PoolTensor t;
    t.name = parts[0];
    if (t.name.empty()) throw bad("empty name");
    t.shape = dims_of(parts[1]);
    if (parts.size() == 4) {
      t.retest_shape = dims_of(parts[3]);
      if (t.retest_shape.size() != t.shape.size())
        throw bad("the re-test shape must have the shape's rank");
    }
    if (parts[2] == "data")
      t.role = Role::Data;
    else if (parts[2] == "weight")
      t.role = Role::Weight;
    else
      throw bad(fmt::format("unknown role '{}'", parts[2]));
    pool.push_back(std::move(t));
  }
  if (pool.empty()) throw Error("pool specification is empty");
  for (size_t i = 0; i < pool.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (pool[i].name == pool[j].name)
        throw Error(fmt::format("pool tensor '{}' is named twice", pool[i].name));
  return pool;
}

namespace {
std::string shape_text(const Shape& shape) {
  std::string dims;
  for (auto d : shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
  return dims;
}
}  // namespace

std::string pool_str(const std::vector<PoolTensor>& pool) {
  std::string s;
  for (auto& t : pool) {
    if (!s.empty()) s += ",";
    if (t.role == Role::Scalar) {
      s += t.name + ":scalar";
      continue;
    }
    std::string dims = shape_text(t.shape);
    s += fmt::format("{}:{}:{}", t.name, dims, role_name(t.role));
    if (!t.retest_shape.empty()) s += ":" + shape_text(t.retest_shape);
  }
  return s;
}

namespace {
uint64_t stream_seed(uint64_t seed, size_t index, uint64_t salt) {
  uint64_t s = seed ^ (0xD6E8FEB86659FD93ull * (index + 1)) ^ salt;
  splitmix64(s);
  return s;
}
}  // namespace

std::vector<uint32_t> pool_values_u32(uint64_t seed, size_t index, int64_t n) {
  uint64_t s = stream_seed(seed, index, 0x5555);
  std::vector<uint32_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<uint32_t>(splitmix64(s) >> 32);
  return v;
}

std::vector<float> pool_values_f32(uint64_t seed, size_t index, int64_t n) {
  uint64_t s = stream_seed(seed, index, 0xAAAA);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v)
    x = static_cast<float>(static_cast<double>(splitmix64(s) >> 11) * 0x1.0p-52 - 1.0);
  return v;
}

std::vector<TensorType> pool_types(const std::vector<PoolTensor>& pool) {
  std::vector<TensorType> out;
  for (auto& p : pool) {
    TensorType t{.shape = p.shape};
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

}  // namespace graphsub::gen
