// The vectorizing f32 e^x, tanh and sigmoid (runtime/kernels/fast_math.h) against long
// double, over their whole ranges, in ulps of the float result.
#include "runtime/kernels/fast_math.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace ytape::kernels;

namespace {

// The distance from `got` to `want` in ulps of the float nearest `want`.
double ulps(float got, long double want) {
  float w = static_cast<float>(want);
  float next = std::nextafter(std::abs(w), std::numeric_limits<float>::infinity());
  long double ulp = static_cast<long double>(next) - std::abs(w);
  return static_cast<double>(std::abs(static_cast<long double>(got) - want) / ulp);
}

// The largest error of f against ref over n points spread evenly over [lo, hi].
template <typename F, typename R>
double max_ulps(F f, R ref, float lo, float hi, int n = 400'000) {
  double worst = 0;
  for (int i = 0; i <= n; ++i) {
    float x = lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(n);
    worst = std::max(worst, ulps(f(x), ref(static_cast<long double>(x))));
  }
  return worst;
}

}  // namespace

TEST_CASE("exp_f32 is within 2 ulp wherever e^x is a normal float") {
  auto ref = [](long double x) { return std::exp(x); };
  CHECK(max_ulps(exp_f32, ref, -87.3f, 88.72f) <= 2);
  CHECK(max_ulps(exp_f32, ref, -1.0f, 1.0f) <= 2);
  // Subnormal results: within one step of the smallest subnormal.
  for (float x = -103.0f; x < -87.4f; x += 0.01f) {
    CHECK(std::abs(exp_f32(x) - static_cast<float>(std::exp(static_cast<long double>(x)))) <=
          std::numeric_limits<float>::denorm_min());
  }
  constexpr float inf = std::numeric_limits<float>::infinity();
  CHECK(exp_f32(0.0f) == 1.0f);
  CHECK(exp_f32(89.0f) == inf);
  CHECK(exp_f32(inf) == inf);
  CHECK(exp_f32(-inf) == 0.0f);
  CHECK(exp_f32(-200.0f) == 0.0f);
  CHECK(std::isnan(exp_f32(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("tanh_f32 is within 2 ulp, and odd") {
  auto ref = [](long double x) { return std::tanh(x); };
  CHECK(max_ulps(tanh_f32, ref, -12.0f, 12.0f) <= 2);
  CHECK(max_ulps(tanh_f32, ref, -0.7f, 0.7f) <= 2);
  CHECK(max_ulps(tanh_f32, ref, 1e-30f, 1e-3f) <= 2);
  constexpr float inf = std::numeric_limits<float>::infinity();
  CHECK(tanh_f32(inf) == 1.0f);
  CHECK(tanh_f32(-inf) == -1.0f);
  CHECK(std::signbit(tanh_f32(-0.0f)));
  CHECK(tanh_f32(3.5f) == -tanh_f32(-3.5f));
  CHECK(std::isnan(tanh_f32(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("sigmoid_f32 is within 2.5 ulp") {
  auto ref = [](long double x) { return 1 / (1 + std::exp(-x)); };
  CHECK(max_ulps(sigmoid_f32, ref, -87.0f, 30.0f) <= 2.5);
  constexpr float inf = std::numeric_limits<float>::infinity();
  CHECK(sigmoid_f32(inf) == 1.0f);
  CHECK(sigmoid_f32(-inf) == 0.0f);
  CHECK(sigmoid_f32(0.0f) == 0.5f);
  CHECK(std::isnan(sigmoid_f32(std::numeric_limits<float>::quiet_NaN())));
}
