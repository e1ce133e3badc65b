// Linear operators: (batched) matmul with optional bias and fused activation, and transpose
// with a general permutation (the axiom language's transpose is the 2-d case).
#include "ops/families.h"
#include "ops/int_list_param.h"
#include "ops/kernel_util.h"
#include "ops/split_trees.h"

namespace graphsub {
namespace {

// ---- matmul: a [..,M,K] x b [..,K,N] or [K,N] (+ bias [N]) -> [..,M,N] ----
std::vector<TensorType> infer_matmul(const Attrs&, std::span<const TensorType> in) {
  const TensorType& a = in[0];
  const TensorType& b = in[1];
  if (a.rank() < 2 || b.rank() < 2)
    throw Error(fmt::format("matmul: operands must have rank >= 2, got {} and {}",
                            shape_str(a.shape), shape_str(b.shape)));
  int64_t r = a.rank();
  bool b_batched = b.rank() > 2;
  if (b_batched &&
      (b.rank() != r || !std::equal(a.shape.begin(), a.shape.end() - 2, b.shape.begin())))
    throw Error(fmt::format(
        "matmul: batch dimensions of {} and {} differ (b must be [K,N] or share a's batch)",
        shape_str(a.shape), shape_str(b.shape)));
  int64_t k = a.shape[r - 1];
  if (b.shape[b.rank() - 2] != k)
    throw Error(fmt::format("matmul: inner sizes of {} and {} differ ({} vs {})",
                            shape_str(a.shape), shape_str(b.shape), k, b.shape[b.rank() - 2]));
  int64_t n = b.shape.back();
  if (in.size() == 3 && in[2].shape != Shape{n})
    throw Error(fmt::format("matmul: bias must be [{}], got {}", n, shape_str(in[2].shape)));
  Shape s(a.shape.begin(), a.shape.end() - 1);
  s.push_back(n);
  TensorType out = derived_type(a, std::move(s));
  // Rows keep a's tree, columns take b's column tree; batch axes need both to agree.
  for (int64_t i = 0; i < r - 2; ++i) {
    SplitTreePtr t = a.split(i);
    if (b_batched && !split_tree_equal(t, b.split(i))) t = nullptr;
    out.set_split(i, t);
  }
  out.set_split(r - 2, a.split(r - 2));
  out.set_split(r - 1, b.split(b.rank() - 1));
  tidy_splits(out);
  return {out};
}

template <class T>
void kernel_matmul(const KernelIO<T>& io) {
  const Shape& as = io.in_types[0].shape;
  const Shape& bs = io.in_types[1].shape;
  size_t r = as.size();
  int64_t m = as[r - 2], k = as[r - 1], n = bs.back();
  // Counted on the output: with k = 0 (empty operands) the result is still m x n.
  if (io.out_types[0].numel() == 0) return;
  int64_t batch = io.out_types[0].numel() / (m * n);
  bool b_batched = bs.size() > 2;
  Act act = parse_act(io.attrs.s("act"));
  const T* bias = io.in.size() > 2 ? io.in[2] : nullptr;
  for (int64_t bt = 0; bt < batch; ++bt) {
    const T* A = io.in[0] + bt * m * k;
    const T* B = io.in[1] + (b_batched ? bt * k * n : 0);
    T* C = io.out[0] + bt * m * n;
    for (int64_t i = 0; i < m; ++i) {
      T* c = C + i * n;
      // i-k-j order: the inner loop runs along contiguous rows of B and C.
      for (int64_t j = 0; j < n; ++j) c[j] = bias ? bias[j] : T{};
      for (int64_t kk = 0; kk < k; ++kk) {
        T av = A[i * k + kk];
        const T* brow = B + kk * n;
        for (int64_t j = 0; j < n; ++j) c[j] += av * brow[j];
      }
      if (act != Act::None)
        for (int64_t j = 0; j < n; ++j) c[j] = apply_act(act, c[j]);
    }
  }
}

OpCost cost_matmul(const Attrs& a, std::span<const TensorType> in,
                   std::span<const TensorType> out) {
  OpCost c = streaming_cost(in, out, 0);
  double outputs = static_cast<double>(out[0].numel());
  double k = static_cast<double>(in[0].shape.back());
  c.flops = 2 * k * outputs;
  if (in.size() > 2) c.flops += outputs;
  if (a.s("act") != "none") c.flops += outputs;
  return c;
}

Attrs matmul_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  return {{"act", param_symbol("matmul", p, 0)}};
}

std::optional<std::vector<AxiomParam>> matmul_attrs_to_params(const Attrs& a,
                                                              std::span<const TensorType> in) {
  // A bias is outside the axiom language, and so are some fused activations.
  if (in.size() > 2 || !act_in_axiom_language(a.s("act"))) return std::nullopt;
  return std::vector<AxiomParam>{a.s("act")};
}

// ---- transpose: general permutation; empty perm reverses the axes ----
std::vector<int64_t> perm_of(const Attrs& a, const TensorType& x) {
  std::vector<int64_t> perm = a.ints("perm");
  int64_t r = x.rank();
  if (perm.empty()) {
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
    return perm;
  }
  std::vector<bool> seen(static_cast<size_t>(r), false);
  bool ok = static_cast<int64_t>(perm.size()) == r;
  for (int64_t p : perm) {
    if (!ok) break;
    if (p < 0 || p >= r || seen[static_cast<size_t>(p)])
      ok = false;
    else
      seen[static_cast<size_t>(p)] = true;
  }
  if (!ok)
    throw Error(fmt::format("transpose: perm {} is not a permutation of the {} axes of {}",
                            shape_str(perm), r, shape_str(x.shape)));
  return perm;
}

std::vector<TensorType> infer_transpose(const Attrs& a, std::span<const TensorType> in) {
  auto perm = perm_of(a, in[0]);
  Shape s;
  for (int64_t p : perm) s.push_back(in[0].shape[static_cast<size_t>(p)]);
  TensorType out = derived_type(in[0], std::move(s));
  for (size_t i = 0; i < perm.size(); ++i)
    out.set_split(i, in[0].split(static_cast<size_t>(perm[i])));
  tidy_splits(out);
  return {out};
}

template <class T>
void kernel_transpose(const KernelIO<T>& io) {
  auto perm = perm_of(io.attrs, io.in_types[0]);
  const Shape& os = io.out_types[0].shape;
  auto in_strides = strides_of(io.in_types[0].shape);
  size_t r = os.size();
  std::vector<int64_t> st(r), idx(r, 0);
  for (size_t i = 0; i < r; ++i) st[i] = in_strides[static_cast<size_t>(perm[i])];
  int64_t n = numel(os), src = 0;
  for (int64_t i = 0; i < n; ++i) {
    io.out[0][i] = io.in[0][src];
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {  // odometer over the output
      src += st[d];
      if (++idx[d] < os[d]) break;
      src -= st[d] * os[d];
      idx[d] = 0;
    }
  }
}

// (transpose x) is the 2-d transpose; (permute p x) a permutation of three or more axes, p
// the axes in output order joined by '_' (0_2_1_3 swaps a batch of heads' two middle axes).
Attrs transpose_params_to_attrs(std::span<const AxiomParam> p, std::span<const TensorType>) {
  if (p.empty()) return {};
  return {{"perm", param_ints("permute", p[0])}};
}

std::optional<std::vector<AxiomParam>> transpose_attrs_to_params(const Attrs& a,
                                                                 std::span<const TensorType> in) {
  auto perm = perm_of(a, in[0]);
  if (in[0].rank() == 2 && perm == std::vector<int64_t>{1, 0}) return std::vector<AxiomParam>{};
  if (in[0].rank() < 3) return std::nullopt;
  return std::vector<AxiomParam>{*ints_param(perm)};
}

}  // namespace

void register_linear_ops(std::vector<OpDef>& defs) {
  defs.push_back({.name = "matmul",
                  .axiom_name = "matmul",
                  .min_inputs = 2,
                  .max_inputs = 3,
                  .attrs = {act_attr()},
                  .infer = infer_matmul,
                  .kernel_f32 = kernel_matmul<float>,
                  .kernel_u32 = kernel_matmul<uint32_t>,
                  .cost = cost_matmul,
                  .axiom_params = {"act"},
                  .params_to_attrs = matmul_params_to_attrs,
                  .attrs_to_params = matmul_attrs_to_params});
  defs.push_back({.name = "transpose",
                  .axiom_name = "transpose",
                  .min_inputs = 1,
                  .max_inputs = 1,
                  .attrs = {ints_attr("perm")},
                  .infer = infer_transpose,
                  .kernel_f32 = kernel_transpose<float>,
                  .kernel_u32 = kernel_transpose<uint32_t>,
                  .cost = copy_cost,
                  .params_to_attrs = transpose_params_to_attrs,
                  .attrs_to_params = transpose_attrs_to_params,
                  .axiom_forms = {{.name = "permute", .num_tensors = 1, .params = {"perm"}}}});
}

}  // namespace graphsub
