#include "support/op_harness.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "exec/reference_executor.h"

namespace graphsub::testutil {

TensorType f32(Shape s) {
  TensorType t;
  t.shape = std::move(s);
  return t;
}

std::vector<TensorType> infer(std::string_view op, const std::vector<TensorType>& ins,
                              Attrs attrs) {
  Graph g;
  std::vector<TensorRef> refs;
  for (size_t i = 0; i < ins.size(); ++i)
    refs.push_back({g.add_input(fmt::format("in{}", i), ins[i]), 0});
  NodeId id = g.add(op, refs, std::move(attrs));
  return g.node(id).outputs;
}

std::vector<TensorType> infer(std::string_view op, const std::vector<Shape>& ins, Attrs attrs) {
  std::vector<TensorType> types;
  for (auto& s : ins) types.push_back(f32(s));
  return infer(op, types, std::move(attrs));
}

std::string infer_error(std::string_view op, const std::vector<Shape>& ins, Attrs attrs) {
  try {
    infer(op, ins, std::move(attrs));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

template <class T>
std::vector<HostTensor<T>> run_op(std::string_view op, const std::vector<HostTensor<T>>& ins,
                                  Attrs attrs) {
  Graph g;
  std::vector<TensorRef> refs;
  TensorMap<T> feeds;
  for (size_t i = 0; i < ins.size(); ++i) {
    std::string name = fmt::format("in{}", i);
    refs.push_back({g.add_input(name, f32(ins[i].shape)), 0});
    feeds[name] = ins[i];
  }
  NodeId id = g.add(op, refs, std::move(attrs));
  for (uint32_t o = 0; o < g.node(id).outputs.size(); ++o)
    g.add_output(fmt::format("out{}", o), {id, o});
  return run_reference(g, feeds);
}

template std::vector<HostTensor<float>> run_op(std::string_view,
                                               const std::vector<HostTensor<float>>&, Attrs);
template std::vector<HostTensor<uint32_t>> run_op(std::string_view,
                                                  const std::vector<HostTensor<uint32_t>>&, Attrs);

HostTensor<float> random_f32(const Shape& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  HostTensor<float> t{s, std::vector<float>(static_cast<size_t>(numel(s)))};
  for (auto& v : t.data) v = d(rng);
  return t;
}

HostTensor<uint32_t> random_u32(const Shape& s, std::mt19937& rng) {
  HostTensor<uint32_t> t{s, std::vector<uint32_t>(static_cast<size_t>(numel(s)))};
  for (auto& v : t.data) v = static_cast<uint32_t>(rng());
  return t;
}

int64_t flat_index(const Shape& s, const std::vector<int64_t>& idx) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + idx[d];
  return f;
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

double max_rel_error(const HostTensor<float>& a, const HostTensor<float>& b) {
  if (a.shape != b.shape || a.data.size() != b.data.size())
    return std::numeric_limits<double>::infinity();
  double m = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    double diff = std::fabs(static_cast<double>(a.data[i]) - b.data[i]);
    if (std::isnan(diff)) return std::numeric_limits<double>::infinity();
    m = std::max(m, diff / std::max(1.0, std::fabs(static_cast<double>(b.data[i]))));
  }
  return m;
}

}  // namespace graphsub::testutil
