#pragma once
// Scalar arithmetic for the generic reference kernels. Kernels are written once over T and
// instantiated for float (execution, numerical checks) and uint32_t (exact wrap-around
// fingerprints for the generator). For uint32_t, non-linear functions are replaced by fixed
// polynomial stand-ins: distinct from each other and non-linear, so unrelated graphs rarely
// collide, and exact, so equal graphs always collide.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace graphsub {

template <class T>
struct Scalar;

template <>
struct Scalar<float> {
  static float from_int(int64_t v) { return static_cast<float>(v); }
  static float from_double(double v) { return static_cast<float>(v); }
  static float inverse(int64_t n) { return 1.0f / static_cast<float>(n); }
  static float mean_factor(int64_t n) { return inverse(n); }
  static float div(float a, float b) { return a / b; }
  static float relu(float x) { return x > 0 ? x : 0; }
  static float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
  static float tanh(float x) { return std::tanh(x); }
  static float exp(float x) { return std::exp(x); }
  static float erf(float x) { return std::erf(x); }
  static float sqrt(float x) { return std::sqrt(x); }
  static float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }
  // Gelu's tanh approximation (ONNX Gelu approximate="tanh", ONNX Runtime's FastGelu).
  static float gelu_tanh(float x) {
    return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
  }
  static float relu6(float x) { return std::min(std::max(x, 0.0f), 6.0f); }
  // ONNX HardSwish: x * max(0, min(1, x/6 + 1/2)).
  static float hardswish(float x) { return x * std::min(std::max(x / 6.0f + 0.5f, 0.0f), 1.0f); }
  static float silu(float x) { return x * sigmoid(x); }
  // Where(IsNaN(x), 0, x): torch's guard after an attention softmax, whose fully masked rows
  // are NaN.
  static float nan_to_zero(float x) { return std::isnan(x) ? 0.0f : x; }
  static float max(float a, float b) { return std::max(a, b); }
  static float lowest() { return -INFINITY; }
};

template <>
struct Scalar<uint32_t> {
  using U = uint32_t;
  static U from_int(int64_t v) { return static_cast<U>(v); }
  static U from_double(double v) { return static_cast<U>(static_cast<int64_t>(std::llround(v))); }
  // Inverse modulo 2^32 of the odd part of n (Newton iteration); exact for odd n, so that
  // 1/9 * 9 == 1 as in the reals. Even factors are dropped (a deterministic stand-in).
  static U inverse(int64_t n) {
    U a = static_cast<U>(n);
    while (a != 0 && (a & 1u) == 0) a >>= 1;
    if (a == 0) return 0;
    U x = a;
    for (int i = 0; i < 5; ++i) x *= 2u - a * x;
    return x;
  }
  // The factor of reduce_mean over n elements. inverse() drops the even part of n, which
  // would make a mean over 2 or 4 elements equal to the sum, and the generator would take
  // one operator for the other; here each factor 2 contributes a fixed odd constant instead.
  // Still multiplicative, so means over two axes commute exactly.
  static U mean_factor(int64_t n) {
    U f = inverse(n);
    for (; n > 0 && n % 2 == 0; n /= 2) f *= 0x9E3779B1u;
    return f;
  }
  static U div(U a, U b) { return a * inverse(b | 1u); }
  static U relu(U x) { return x * (x + 1u) + 1u; }
  static U sigmoid(U x) { return x * (x * 3u + 5u) + 7u; }
  static U tanh(U x) { return x * (x * 11u + 13u) + 17u; }
  static U exp(U x) { return x * (x * 19u + 23u) + 1u; }
  static U erf(U x) { return x * (x * 29u + 31u) + 37u; }
  static U sqrt(U x) { return x * (x * 41u + 43u) + 47u; }
  static U gelu(U x) { return x * (x * 53u + 59u) + 61u; }
  static U gelu_tanh(U x) { return x * (x * 97u + 101u) + 103u; }
  static U relu6(U x) { return x * (x * 67u + 71u) + 73u; }
  // hardswish and silu are x times a gate, as in the reals, so that silu(x) and
  // ewmul(x, sigmoid(x)) share their fingerprint; hardswish's gate is its own stand-in.
  static U hardswish(U x) { return x * (x * (x * 79u + 83u) + 89u); }
  static U silu(U x) { return x * sigmoid(x); }
  // No NaN exists here; a stand-in all the same, so that the generator never takes the guard
  // for the identity (it is not one in floats).
  static U nan_to_zero(U x) { return x * (x * 107u + 109u) + 113u; }
  static U max(U a, U b) { return std::max(a, b); }
  static U lowest() { return 0; }
};

// Fused activation shared by conv and matmul ("none" or one of fused_activations()).
enum class Act : uint8_t { None, Relu, Sigmoid, Tanh, Relu6, HardSwish, Silu, Gelu };
Act parse_act(const std::string& s);

template <class T>
inline T apply_act(Act a, T x) {
  switch (a) {
    case Act::None:
      return x;
    case Act::Relu:
      return Scalar<T>::relu(x);
    case Act::Sigmoid:
      return Scalar<T>::sigmoid(x);
    case Act::Tanh:
      return Scalar<T>::tanh(x);
    case Act::Relu6:
      return Scalar<T>::relu6(x);
    case Act::HardSwish:
      return Scalar<T>::hardswish(x);
    case Act::Silu:
      return Scalar<T>::silu(x);
    case Act::Gelu:
      return Scalar<T>::gelu(x);
  }
  return x;
}

}  // namespace graphsub
