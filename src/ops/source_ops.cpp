// Source operators: graph inputs, weights, and the constants of the generator set
// (Cpool, Iconv, Imatmul, Iewmul), whose values depend only on their attributes.
#include "ops/families.h"
#include "ops/kernel_util.h"

namespace graphsub {
namespace {

std::vector<TensorType> typed(Shape s) {
  TensorType t;
  t.shape = std::move(s);
  return {t};
}

void check_kernel(const char* op, const std::vector<int64_t>& k) {
  if (k.size() != 2 || k[0] < 1 || k[1] < 1)
    throw Error(
        fmt::format("{}: kernel must be [kh,kw] with positive sizes, got {}", op, shape_str(k)));
}

// Cpool(k): depth-wise [C,1,kh,kw] kernel, every entry 1/(kh*kw).
std::vector<TensorType> infer_cpool(const Attrs& a, std::span<const TensorType>) {
  check_kernel("const_pool", a.ints("kernel"));
  if (a.i("channels") < 1) throw Error("const_pool: channels must be positive");
  return typed({a.i("channels"), 1, a.ints("kernel")[0], a.ints("kernel")[1]});
}
template <class T>
void kernel_cpool(const KernelIO<T>& io) {
  auto& k = io.attrs.ints("kernel");
  T v = Scalar<T>::inverse(k[0] * k[1]);
  std::fill(io.out[0], io.out[0] + io.out_types[0].numel(), v);
}

// Iconv(k): [C,C,kh,kw] with 1 at the centre tap of the diagonal: conv with it is identity.
std::vector<TensorType> infer_iconv(const Attrs& a, std::span<const TensorType>) {
  auto& k = a.ints("kernel");
  check_kernel("const_iconv", k);
  if (k[0] % 2 == 0 || k[1] % 2 == 0) throw Error("const_iconv: kernel sizes must be odd");
  if (a.i("channels") < 1) throw Error("const_iconv: channels must be positive");
  return typed({a.i("channels"), a.i("channels"), k[0], k[1]});
}
template <class T>
void kernel_iconv(const KernelIO<T>& io) {
  auto& s = io.out_types[0].shape;
  std::fill(io.out[0], io.out[0] + io.out_types[0].numel(), T{});
  for (int64_t c = 0; c < s[0]; ++c)
    io.out[0][((c * s[1] + c) * s[2] + s[2] / 2) * s[3] + s[3] / 2] = Scalar<T>::from_int(1);
}

std::vector<TensorType> infer_imatmul(const Attrs& a, std::span<const TensorType>) {
  if (a.i("n") < 1) throw Error("const_imatmul: n must be positive");
  return typed({a.i("n"), a.i("n")});
}
template <class T>
void kernel_imatmul(const KernelIO<T>& io) {
  int64_t n = io.out_types[0].shape[0];
  std::fill(io.out[0], io.out[0] + n * n, T{});
  for (int64_t i = 0; i < n; ++i) io.out[0][i * n + i] = Scalar<T>::from_int(1);
}

std::vector<TensorType> infer_iewmul(const Attrs& a, std::span<const TensorType>) {
  for (auto d : a.ints("shape"))
    if (d < 1) throw Error(fmt::format("const_iewmul: bad shape {}", shape_str(a.ints("shape"))));
  return typed(a.ints("shape"));
}
template <class T>
void kernel_ones(const KernelIO<T>& io) {
  std::fill(io.out[0], io.out[0] + io.out_types[0].numel(), Scalar<T>::from_int(1));
}

std::vector<TensorType> infer_given(const Attrs&, std::span<const TensorType>) {
  throw Error("inputs and weights carry their type; they are not inferred");
}

}  // namespace

void register_source_ops(std::vector<OpDef>& defs) {
  const AttrSpec kernel{"kernel", AttrKind::Ints, std::nullopt, {}};
  const AttrSpec channels{"channels", AttrKind::Int, std::nullopt, {}};
  defs.push_back({.name = "input", .cls = OpClass::Source, .infer = infer_given});
  defs.push_back({.name = "weight", .cls = OpClass::Source, .infer = infer_given});
  defs.push_back({.name = "const_pool",
                  .axiom_name = "cpool",
                  .cls = OpClass::Source,
                  .attrs = {channels, kernel},
                  .infer = infer_cpool,
                  .kernel_f32 = kernel_cpool<float>,
                  .kernel_u32 = kernel_cpool<uint32_t>,
                  .axiom_params = {"kernel"},
                  .params_to_attrs = square_kernel_attrs,
                  .attrs_to_params = square_kernel_params});
  defs.push_back({.name = "const_iconv",
                  .axiom_name = "iconv",
                  .cls = OpClass::Source,
                  .attrs = {channels, kernel},
                  .infer = infer_iconv,
                  .kernel_f32 = kernel_iconv<float>,
                  .kernel_u32 = kernel_iconv<uint32_t>,
                  .axiom_params = {"kernel"},
                  .params_to_attrs = square_kernel_attrs,
                  .attrs_to_params = square_kernel_params});
  defs.push_back({.name = "const_imatmul",
                  .axiom_name = "imatmul",
                  .cls = OpClass::Source,
                  .attrs = {{"n", AttrKind::Int, std::nullopt, {}}},
                  .infer = infer_imatmul,
                  .kernel_f32 = kernel_imatmul<float>,
                  .kernel_u32 = kernel_imatmul<uint32_t>});
  defs.push_back({.name = "const_iewmul",
                  .axiom_name = "iewmul",
                  .cls = OpClass::Source,
                  .attrs = {{"shape", AttrKind::Ints, std::nullopt, {}}},
                  .infer = infer_iewmul,
                  .kernel_f32 = kernel_ones<float>,
                  .kernel_u32 = kernel_ones<uint32_t>});
}

}  // namespace graphsub
