#include "gen/space/evaluator.h"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "ir/hash.h"

namespace graphsub::gen {

TypeId TypeTable::intern(const TensorType& t) {
  uint64_t h = Hasher().add(t).digest();
  auto range = by_hash_.equal_range(h);
  for (auto it = range.first; it != range.second; ++it)
    if (types_[it->second] == t) return it->second;
  if (types_.size() >= 0xFFFF) throw Error("generator: too many distinct tensor types");
  auto id = static_cast<TypeId>(types_.size());
  types_.push_back(t);
  hashes_.push_back(h);
  numels_.push_back(t.numel());
  by_hash_.emplace(h, id);
  return id;
}

const Applied& Evaluator::apply(uint32_t v, std::span<const TypeId> in) {
  if (in.size() > 2) {
    WideKey key{};
    key[0] = v;
    std::copy(in.begin(), in.end(), key.begin() + 1);
    if (auto it = wide_.find(key); it != wide_.end()) return applied_[it->second];
    const Applied& a = resolve(v, in);
    wide_.emplace(key, static_cast<uint32_t>(applied_.size() - 1));  // a is applied_.back()
    return a;
  }
  const uint64_t row_key = (uint64_t{v} + 1) << 16 | (in.empty() ? 0xFFFFu : in[0]);  // never 0
  const size_t col = in.size() > 1 ? size_t{in[1]} + 1 : 0;
  const uint32_t* row_idx = rows_.find(row_key);
  if (!row_idx) {
    rows_.insert(row_key, static_cast<uint32_t>(row_data_.size()));
    row_data_.emplace_back();
    row_idx = rows_.find(row_key);
  }
  std::vector<uint32_t>& row = row_data_[*row_idx];
  if (col < row.size() && row[col] != 0) return applied_[row[col] - 1];
  const Applied& a = resolve(v, in);
  // resolve may add rows (aliases resolve lower variants), so the row is looked up again.
  std::vector<uint32_t>& r = row_data_[*rows_.find(row_key)];
  if (col >= r.size()) r.resize(std::max(col + 1, 2 * r.size()), 0);
  r[col] = static_cast<uint32_t>(applied_.size());  // a is applied_.back()
  return a;
}

const Applied& Evaluator::resolve(uint32_t v, std::span<const TypeId> in) {
  const GenOp& op = variants_[v];
  Applied a;
  for (TypeId t : in) a.in_types.push_back(types_.type(t));
  try {
    // An operator's kernel reads exactly its arity's inputs.
    if (static_cast<int>(in.size()) != op.arity)
      throw Error(fmt::format("{} takes {} inputs, not {}", op.label(), op.arity, in.size()));
    Attrs attrs;
    if (op.arity == 0)
      attrs = alt_ ? op.alt_const_attrs : op.const_attrs;
    else if (op.def->params_to_attrs)
      attrs = op.def->params_to_attrs(op.params, a.in_types);
    a.attrs = normalize_attrs(*op.def, std::move(attrs));
    a.out_types = op.def->infer(a.attrs, a.in_types);
    // A variant may expose fewer outputs than its kernel writes (a skip normalization's norm
    // without its sum, GenOp::num_outputs); the rest go to scratch buffers in run().
    if (static_cast<int>(a.out_types.size()) < op.num_outputs)
      throw Error(fmt::format("{} produced {} outputs", op.label(), a.out_types.size()));
    // Only applications the rule language can express as this term ((transpose x) is 2-d
    // there, (permute p x) of more axes).
    if (op.arity > 0 && op.def->attrs_to_params) {
      auto p = op.def->attrs_to_params(a.attrs, a.in_types);
      if (!p || p->size() != op.params.size())
        throw Error(fmt::format("{} on these inputs is outside the rule language", op.label()));
    }
    a.num_out = op.num_outputs;
    for (int i = 0; i < a.num_out; ++i) {
      if (a.out_types[i].numel() <= 0) throw Error("empty output");
      a.out[i] = types_.intern(a.out_types[i]);
    }
    a.ok = true;
  } catch (const Error&) {
    a = Applied{};
  }
  // Aliases: a variant whose attributes equal those of a lower variant of the same operator
  // on these inputs (padding same and valid of a 1x1 kernel) is the same operator; only the
  // lower one applies, so graphs are not duplicated under another name.
  if (a.ok)
    for (uint32_t u = 0; u < v; ++u)
      if (variants_[u].def == op.def && variants_[u].arity == op.arity &&
          variants_[u].num_outputs == op.num_outputs) {
        const Applied& b = apply(u, in);
        if (b.ok && b.attrs == a.attrs) {
          a = Applied{};
          break;
        }
      }
  if (a.ok && !alt_ && ignores_an_input(v, a)) a = Applied{};
  applied_.push_back(std::move(a));
  return applied_.back();
}

namespace {
// Deterministic fillings (splitmix64), so that the enumeration does not depend on the run.
void fill(std::vector<uint32_t>& v, uint64_t seed) {
  for (uint32_t& x : v) {
    seed += 0x9E3779B97F4A7C15ull;
    uint64_t z = seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    x = static_cast<uint32_t>(z ^ (z >> 31));
  }
}
}  // namespace

bool Evaluator::ignores_an_input(uint32_t v, const Applied& a) const {
  const size_t n_in = a.in_types.size();
  std::vector<std::vector<uint32_t>> in(n_in);
  for (size_t i = 0; i < n_in; ++i) {
    in[i].resize(static_cast<size_t>(a.in_types[i].numel()));
    fill(in[i], 1 + i);
  }
  auto outputs = [&] {
    std::vector<std::vector<uint32_t>> out(static_cast<size_t>(a.num_out));
    std::vector<const uint32_t*> ip;
    std::vector<uint32_t*> op;
    for (auto& x : in) ip.push_back(x.data());
    for (int o = 0; o < a.num_out; ++o) {
      out[static_cast<size_t>(o)].resize(
          static_cast<size_t>(a.out_types[static_cast<size_t>(o)].numel()));
      op.push_back(out[static_cast<size_t>(o)].data());
    }
    run<uint32_t>(v, a, std::span<const uint32_t* const>(ip), std::span<uint32_t* const>(op));
    return out;
  };
  const auto base = outputs();
  for (size_t i = 0; i < n_in; ++i) {
    const std::vector<uint32_t> kept = in[i];
    // Three other fillings must all leave every output as it was: a kernel that reads the
    // input changes its outputs for almost every filling (the stand-ins are polynomials).
    bool ignored = true;
    for (uint64_t t = 1; ignored && t <= 3; ++t) {
      fill(in[i], 1000 * t + i);
      ignored = outputs() == base;
    }
    in[i] = kept;
    if (ignored) return true;
  }
  return false;
}

template <class T>
void Evaluator::run(uint32_t v, const Applied& a, std::span<const T* const> in,
                    std::span<T* const> out) const {
  const OpDef& def = *variants_[v].def;
  Kernel<T> k;
  if constexpr (std::is_same_v<T, float>)
    k = def.kernel_f32;
  else
    k = def.kernel_u32;
  if (!k) throw Error(fmt::format("operator {} has no reference kernel", def.name));
  if (a.out_types.size() <= out.size()) {
    KernelIO<T> io{a.attrs, a.in_types, a.out_types, in, out};
    k(io);
    return;
  }
  // Outputs the variant does not expose are written to scratch and dropped.
  std::vector<std::vector<T>> scratch(a.out_types.size() - out.size());
  std::vector<T*> all(out.begin(), out.end());
  for (size_t i = 0; i < scratch.size(); ++i) {
    scratch[i].resize(static_cast<size_t>(a.out_types[out.size() + i].numel()));
    all.push_back(scratch[i].data());
  }
  KernelIO<T> io{a.attrs, a.in_types, a.out_types, in, all};
  k(io);
}

template void Evaluator::run<float>(uint32_t, const Applied&, std::span<const float* const>,
                                    std::span<float* const>) const;
template void Evaluator::run<uint32_t>(uint32_t, const Applied&, std::span<const uint32_t* const>,
                                       std::span<uint32_t* const>) const;

}  // namespace graphsub::gen
