// Checked arithmetic for sizes, counts and divisors that come from untrusted input: tape
// attributes, ONNX attributes and initializers, tensor files, program values.
#pragma once

#include <cstdint>
#include <string_view>

#include "tape/dtype.h"
#include "tape/error.h"

namespace ytape::checked {

/// a + b; throws UserError "WHAT: A + B overflows" where int64 cannot hold it.
inline int64_t add(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) user_error("{}: {} + {} overflows", what, a, b);
  return r;
}

/// a - b; throws UserError where int64 cannot hold it.
inline int64_t sub(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) user_error("{}: {} - {} overflows", what, a, b);
  return r;
}

/// a * b; throws UserError where int64 cannot hold it.
inline int64_t mul(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) user_error("{}: {} * {} overflows", what, a, b);
  return r;
}

/// a / b rounded toward zero; throws UserError for b = 0 and for INT64_MIN / -1.
inline int64_t div(int64_t a, int64_t b, std::string_view what) {
  if (b == 0) user_error("{}: division of {} by zero", what, a);
  if (b == -1 && a == INT64_MIN) user_error("{}: {} / -1 overflows", what, a);
  return a / b;
}

/// `n` as an element count: throws unless 0 <= n <= kMaxElements (2^48).
inline int64_t count(int64_t n, std::string_view what) {
  if (n < 0) user_error("{}: {} is negative", what, n);
  if (n > kMaxElements) user_error("{}: {} is more than 2^48 elements", what, n);
  return n;
}

/// a * b as an element count (both non-negative): throws past kMaxElements, before the
/// product could overflow.
inline int64_t count_mul(int64_t a, int64_t b, std::string_view what) {
  count(a, what);
  count(b, what);
  if (a != 0 && b > kMaxElements / a) {
    user_error("{}: {} * {} is more than 2^48 elements", what, a, b);
  }
  return a * b;
}

/// The element count of `shape`: throws unless every dimension is non-negative and the
/// product is at most kMaxElements.
inline int64_t elements(const Shape& shape, std::string_view what) {
  int64_t n = 1;
  for (int64_t d : shape) n = count_mul(n, d, what);
  return n;
}

}  // namespace ytape::checked
