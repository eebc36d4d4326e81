// e^x, tanh and the logistic sigmoid of f32 elements, written so that a loop of them
// vectorizes: no branches (both sides computed, then selected), no calls, the exponent
// built with integer arithmetic. The C library's expf and tanhf are scalar calls, and
// LSTM and GRU bodies spend most of their time in them.
//
// The polynomials are Cephes' (S. L. Moshier), made for IEEE single arithmetic without
// fused multiply-adds: the file that includes this is compiled with -ffp-contract=off, so
// every instruction set the rows are built for (AVX-512, AVX2, baseline) gives the same
// bits. Errors, measured against long double over every range of the inputs
// (tests/unit/runtime/fast_math_test.cc): exp and tanh within 2 ulp, sigmoid (a quotient of
// e^-|x|) within 2.5.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

namespace ytape::kernels {

/// e^x = y * 2^k for finite x, |x| < 2^15: k (returned in `k`) the integer nearest to x / ln
/// 2, y = e^r of the rest r, |r| <= ln(2) / 2.
inline float exp_f32_reduced(float x, float& k) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kC1 = 0.693359375f;  // ln 2 = kC1 + kC2; k * kC1 is exact for |k| <= 2^15
  constexpr float kC2 = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  k = (x * kLog2e + kRound) - kRound;
  const float r = (x - k * kC1) - k * kC2;
  const float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return (p * z + r) + 1.0f;
}

/// e^x: inf above ln(FLT_MAX), 0 below the smallest subnormal's log, NaN for NaN.
inline float exp_f32(float x) {
  constexpr float kHi = 88.72283935546875f;    // e^x overflows above
  constexpr float kLo = -103.97208404541016f;  // e^x rounds to 0 below
  // NaN takes 0 through the arithmetic, which would convert it to an integer (UB), and is
  // put back at the end. So does x below kLo (-inf: attention's masked scores), whose
  // result is 0 whatever is computed: kLo itself would make the scaling below subnormal,
  // which the processor computes in microcode, 100 times slower (the masked half of a
  // causal softmax took 3x the time of the rest).
  float c = x < kLo ? 0.0f : x;
  c = c > kHi ? kHi : c;
  c = c == c ? c : 0.0f;
  float k;  // in [-150, 128]
  const float y = exp_f32_reduced(c, k);
  // 2^k in two factors, each a normal float, so that results near overflow and in the
  // subnormal range are rounded once.
  const auto ki = static_cast<int32_t>(k);
  const int32_t k1 = ki / 2, k2 = ki - k1;
  const float s1 = std::bit_cast<float>(static_cast<uint32_t>(k1 + 127) << 23);
  const float s2 = std::bit_cast<float>(static_cast<uint32_t>(k2 + 127) << 23);
  const float e = (y * s1) * s2;
  const float out = x > kHi ? std::numeric_limits<float>::infinity() : x < kLo ? 0.0f : e;
  return x == x ? out : x + x;
}

/// exp_f32(x) for x in [-87, 88], where e^x is a normal float: one scaling, no checks (the
/// same bits: scaling a normal float by powers of 2 in one step or two is exact).
inline float exp_f32_normal(float x) {
  float k;  // in [-126, 127]
  const float y = exp_f32_reduced(x, k);
  return y * std::bit_cast<float>(static_cast<uint32_t>(static_cast<int32_t>(k) + 127) << 23);
}

/// tanh(x): a polynomial near 0, where 1 - 2 / (e^2|x| + 1) would lose the low digits.
inline float tanh_f32(float x) {
  const float a = x < 0 ? -x : x;
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = (p * z) * x + x;
  // e^2|x| is taken at 2|x| <= 20 (NaN too, put back below), where it needs no care at
  // the ends of the range; beyond, 1 - 2 / (e^2|x| + 1) rounds to 1 as at 20.
  const float big = 1.0f - 2.0f / (exp_f32_normal(a + a < 20.0f ? a + a : 20.0f) + 1.0f);
  const float out = a < 0.625f ? small : (x < 0 ? -big : big);
  return x == x && x != 0 ? out : x + x;  // NaN stays NaN, -0 stays -0
}

/// 1 / (1 + e^-x), as e^-|x| over 1 + e^-|x| for x < 0: e^ never overflows.
inline float sigmoid_f32(float x) {
  const float e = exp_f32(x < 0 ? x : -x);
  return (x < 0 ? e : 1.0f) / (1.0f + e);
}

}  // namespace ytape::kernels
