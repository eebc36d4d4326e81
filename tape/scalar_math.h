// The scalar arithmetic of the elementwise primitives, written once for the kernels
// (runtime/kernels/) and the interpreter's numbers (tracer/builtins/builtins_math.cc), so
// that a number and a one-element array give the same bits.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace ytape {

/// Wrapping two's complement arithmetic for i64: overflow is defined, as in Julia.
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

/// a + b, a - b, a * b, wrapping for i64.
template <typename T>
inline T add_values(T a, T b) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return wrap_add(a, b);
  } else {
    return a + b;
  }
}
template <typename T>
inline T sub_values(T a, T b) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return wrap_sub(a, b);
  } else {
    return a - b;
  }
}
template <typename T>
inline T mul_values(T a, T b) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return wrap_mul(a, b);
  } else {
    return a * b;
  }
}

/// max and min that propagate NaN (IEEE 754-2019 maximum / minimum, up to signed zeros).
template <typename T>
inline T max_nan(T a, T b) {
  return (a > b || a != a) ? a : b;
}
template <typename T>
inline T min_nan(T a, T b) {
  return (a < b || a != a) ? a : b;
}

}  // namespace ytape
