// Element-wise operators: the generator's ewadd/ewmul (equal shapes) and smul (times a 0-d
// scalar), ONNX-style broadcasting add/sub/mul/div, and the unary activations without
// parameters (those with parameters are in activation_ops.cpp).
#include "ops/families.h"
#include "ops/kernel_util.h"

namespace graphsub {
namespace {

// ---- binary, equal shapes (generator set) ----
std::vector<TensorType> infer_same_shape(const Attrs&, std::span<const TensorType> in) {
  if (in[0].shape != in[1].shape)
    throw Error(fmt::format("operand shapes {} and {} differ", shape_str(in[0].shape),
                            shape_str(in[1].shape)));
  TensorType out = in[0];
  // Split points survive only where both operands agree on them.
  for (size_t a = 0; a < out.splits.size(); ++a)
    if (!split_tree_equal(in[0].split(a), in[1].split(a))) out.splits[a] = nullptr;
  if (!out.has_splits()) out.splits.clear();
  return {out};
}

struct AddF {
  template <class T>
  static T apply(T a, T b) {
    return a + b;
  }
};
struct SubF {
  template <class T>
  static T apply(T a, T b) {
    return a - b;
  }
};
struct MulF {
  template <class T>
  static T apply(T a, T b) {
    return a * b;
  }
};
struct DivF {
  template <class T>
  static T apply(T a, T b) {
    return Scalar<T>::div(a, b);
  }
};

template <class F, class T>
void kernel_same_shape(const KernelIO<T>& io) {
  int64_t n = io.out_types[0].numel();
  for (int64_t i = 0; i < n; ++i) io.out[0][i] = F::apply(io.in[0][i], io.in[1][i]);
}

// ---- broadcasting ----
std::vector<TensorType> infer_broadcast(const Attrs&, std::span<const TensorType> in) {
  TensorType out;
  out.dtype = in[0].dtype;
  out.shape = broadcast_shapes("broadcast", in[0].shape, in[1].shape);
  return {out};
}

template <class F, class T>
void kernel_broadcast(const KernelIO<T>& io) {
  const Shape& os = io.out_types[0].shape;
  size_t r = os.size();
  // Strides of each operand in the output's index space (0 on broadcast axes).
  auto bstrides = [&](const Shape& s) {
    std::vector<int64_t> st(r, 0), own = strides_of(s);
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] != 1) st[r - s.size() + i] = own[i];
    return st;
  };
  auto sa = bstrides(io.in_types[0].shape), sb = bstrides(io.in_types[1].shape);
  int64_t n = numel(os);
  std::vector<int64_t> idx(r, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t i = 0; i < n; ++i) {
    io.out[0][i] = F::apply(io.in[0][ia], io.in[1][ib]);
    for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d) {  // odometer increment
      ia += sa[d];
      ib += sb[d];
      if (++idx[d] < os[d]) break;
      ia -= sa[d] * os[d];
      ib -= sb[d] * os[d];
      idx[d] = 0;
    }
  }
}

// ---- smul: tensor times 0-d scalar ----
std::vector<TensorType> infer_smul(const Attrs&, std::span<const TensorType> in) {
  if (!in[1].shape.empty())
    throw Error(fmt::format("scalar operand must be 0-d, got {}", shape_str(in[1].shape)));
  return {in[0]};
}
template <class T>
void kernel_smul(const KernelIO<T>& io) {
  int64_t n = io.out_types[0].numel();
  T s = io.in[1][0];
  for (int64_t i = 0; i < n; ++i) io.out[0][i] = io.in[0][i] * s;
}

// ---- unary ----
struct Relu {
  template <class T>
  static T apply(T x) {
    return Scalar<T>::relu(x);
  }
};
struct Sigmoid {
  template <class T>
  static T apply(T x) {
    return Scalar<T>::sigmoid(x);
  }
};
struct Tanh {
  template <class T>
  static T apply(T x) {
    return Scalar<T>::tanh(x);
  }
};
struct Gelu {
  template <class T>
  static T apply(T x) {
    return Scalar<T>::gelu(x);
  }
};
struct Erf {
  template <class T>
  static T apply(T x) {
    return Scalar<T>::erf(x);
  }
};
struct Exp {
  template <class T>
  static T apply(T x) {
    return Scalar<T>::exp(x);
  }
};
struct Sqrt {
  template <class T>
  static T apply(T x) {
    return Scalar<T>::sqrt(x);
  }
};
struct Relu6 {
  template <class T>
  static T apply(T x) {
    return Scalar<T>::relu6(x);
  }
};
struct HardSwish {
  template <class T>
  static T apply(T x) {
    return Scalar<T>::hardswish(x);
  }
};
struct Silu {
  template <class T>
  static T apply(T x) {
    return Scalar<T>::silu(x);
  }
};
struct GeluTanh {
  template <class T>
  static T apply(T x) {
    return Scalar<T>::gelu_tanh(x);
  }
};
struct NanToZero {
  template <class T>
  static T apply(T x) {
    return Scalar<T>::nan_to_zero(x);
  }
};
struct Neg {  // exact in wrap-around uint32 too: a linear map, no stand-in
  template <class T>
  static T apply(T x) {
    return static_cast<T>(T{0} - x);
  }
};
struct Identity {
  template <class T>
  static T apply(T x) {
    return x;
  }
};

template <class F, class T>
void kernel_unary(const KernelIO<T>& io) {
  int64_t n = io.out_types[0].numel();
  for (int64_t i = 0; i < n; ++i) io.out[0][i] = F::apply(io.in[0][i]);
}

template <class F>
OpDef unary(const char* name, const char* axiom, bool standin = true) {
  return {.name = name,
          .axiom_name = axiom,
          .min_inputs = 1,
          .max_inputs = 1,
          .infer = same_as_first,
          .kernel_f32 = kernel_unary<F, float>,
          .kernel_u32 = kernel_unary<F, uint32_t>,
          .elementwise = true,
          .standin = standin};
}

template <class F>
OpDef binary(const char* name, const char* axiom, bool broadcast) {
  return {.name = name,
          .axiom_name = axiom,
          .min_inputs = 2,
          .max_inputs = 2,
          .infer = broadcast ? infer_broadcast : infer_same_shape,
          .kernel_f32 = broadcast ? kernel_broadcast<F, float> : kernel_same_shape<F, float>,
          .kernel_u32 = broadcast ? kernel_broadcast<F, uint32_t> : kernel_same_shape<F, uint32_t>,
          .elementwise = true};
}

}  // namespace

void register_elementwise_ops(std::vector<OpDef>& defs) {
  defs.push_back(binary<AddF>("ewadd", "ewadd", false));
  defs.push_back(binary<MulF>("ewmul", "ewmul", false));
  // The broadcasting add and mul are in the language too, with axioms that hold for every
  // pair of shapes that broadcast (specs/operators.axioms); sub and div are not yet.
  defs.push_back(binary<AddF>("add", "add", true));
  defs.push_back(binary<SubF>("sub", "", true));
  defs.push_back(binary<MulF>("mul", "mul", true));
  defs.push_back(binary<DivF>("div", "", true));
  defs.push_back({.name = "smul",
                  .axiom_name = "smul",
                  .min_inputs = 2,
                  .max_inputs = 2,
                  .infer = infer_smul,
                  .kernel_f32 = kernel_smul<float>,
                  .kernel_u32 = kernel_smul<uint32_t>,
                  .elementwise = true});
  defs.push_back(unary<Relu>("relu", "relu"));
  defs.push_back(unary<Sigmoid>("sigmoid", "sigmoid"));
  defs.push_back(unary<Tanh>("tanh", "tanh"));
  defs.push_back(unary<Gelu>("gelu", "gelu"));
  defs.push_back(unary<GeluTanh>("gelu_tanh", "gelu_tanh"));
  defs.push_back(unary<Erf>("erf", ""));
  defs.push_back(unary<Exp>("exp", ""));
  defs.push_back(unary<Sqrt>("sqrt", ""));
  defs.push_back(unary<Identity>("identity", "", false));
  defs.push_back(unary<Neg>("neg", "neg", false));
  defs.push_back(unary<Relu6>("relu6", "relu6"));
  defs.push_back(unary<HardSwish>("hardswish", "hardswish"));
  defs.push_back(unary<Silu>("silu", "silu"));
  // Where(IsNaN(x), 0, x), one operator so that the rules see torch's guarded attention softmax
  // as a unit (its axioms, specs/operators.axioms, say where it moves).
  defs.push_back(unary<NanToZero>("nan_to_zero", "nan_to_zero"));
}

}  // namespace graphsub
