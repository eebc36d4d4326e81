// f16 conversions against an independent reference: exact decoding by the formula, and
// rounding by search for the nearest representable value.
#include "tape/float16.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "tape/dtype.h"

using namespace ytape;

namespace {

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// The value of f16 bits from the format's definition.
double decoded(uint16_t h) {
  int sign = h >> 15 ? -1 : 1, exp = (h >> 10) & 31, mant = h & 1023;
  if (exp == 31) return mant ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  return sign * std::ldexp(1024 + mant, exp - 25);
}

// Rounding by comparison with the two finite f16 around x (found by bisection over the
// bit patterns, which order the positive values): nearest, ties to the even mantissa, and
// infinity from 65520 (half an ulp above the largest) up.
uint16_t naive_round(double x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(x);
  if (a >= 65520) return sign | 0x7c00;
  uint16_t lo = 0, hi = 0x7bff;  // the largest h with decoded(h) <= a
  while (lo < hi) {
    auto mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (decoded(mid) <= a) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  if (lo == 0x7bff) return sign | lo;
  double below = a - decoded(lo), above = decoded(lo + 1) - a;
  bool up = above < below || (above == below && (lo & 1) == 1);
  return sign | static_cast<uint16_t>(up ? lo + 1 : lo);
}

}  // namespace

TEST_CASE("every f16 bit pattern widens exactly and rounds back to itself") {
  for (uint32_t i = 0; i < 65536; ++i) {
    auto h = static_cast<uint16_t>(i);
    float f = f16_to_f32(h);
    double want = decoded(h);
    if (std::isnan(want)) {
      CHECK(std::isnan(f));
      CHECK((bits_of(f) >> 13 & 0x3ff) == (h & 0x3ffu));  // the payload is kept
      CHECK(std::signbit(f) == (h >> 15 != 0));
      CHECK((f16_from_double(f) & 0x7e00) == 0x7e00);  // quiet NaN, sign kept
      CHECK((f16_from_double(f) & 0x8000) == (h & 0x8000));
      continue;
    }
    CHECK(static_cast<double>(f) == want);
    CHECK(std::signbit(f) == (h >> 15 != 0));
    CHECK(f16_from_double(f) == h);
  }
}

TEST_CASE("f32 and f64 round to the nearest f16, ties to even") {
  // Every f16 and the midpoints and quarter points between neighbours, subnormals and
  // the overflow threshold included.
  for (uint16_t h = 0; h < 0x7c00; h += (h < 0x0800 || h > 0x7b00) ? 1 : 37) {
    double lo = decoded(h), hi = h + 1 < 0x7c00 ? decoded(h + 1) : 65536.0;
    for (double t : {0.0, 0.25, 0.5, 0.75}) {
      double x = lo + t * (hi - lo);
      CAPTURE(x);
      CHECK(f16_from_double(x) == naive_round(x));
      CHECK(f16_from_double(-x) == naive_round(-x));
      CHECK(f16_from_double(static_cast<float>(x)) == naive_round(static_cast<float>(x)));
    }
  }
  CHECK(f16_from_double(65519.99) == 0x7bff);
  CHECK(f16_from_double(65520.0) == 0x7c00);
  CHECK(f16_from_double(1e10) == 0x7c00);
  CHECK(f16_from_double(-INFINITY) == 0xfc00);
  CHECK(f16_from_double(0x1p-25) == 0);         // half the smallest subnormal: to even 0
  CHECK(f16_from_double(0x1.000001p-25) == 1);  // just above it
  CHECK(f16_from_double(3 * 0x1p-25) == 2);     // 1.5 ulp: to even 2
  CHECK(f16_from_double(-0.0) == 0x8000);
  // One rounding from f64: the f32 nearest to x rounds the other way.
  double x = 1 + 0x1p-11 + 0x1p-40;  // just above a tie: up
  CHECK(f16_from_double(x) == 0x3c01);
  CHECK(f16_from_double(static_cast<float>(x)) == 0x3c00);
}

TEST_CASE("f16 text is the shortest form that reads back") {
  CHECK(float16_str(0x3c00) == "1.0");
  CHECK(float16_str(f16_from_double(0.1)) == "0.1");
  CHECK(float16_str(0x7bff) == "65500.0");  // the shortest that reads back to 65504
  CHECK(float16_str(0x0001) == "6e-08");
  CHECK(float16_str(0x7c00) == "inf");
  CHECK(float16_str(0xfc00) == "-inf");
  CHECK(float16_str(0x7e00) == "nan");
  for (uint32_t i = 0; i < 0x7c00; ++i) {
    auto h = static_cast<uint16_t>(i);
    CHECK(f16_from_double(std::stod(float16_str(h))) == h);
  }
}

TEST_CASE("f16 is a float dtype of two bytes") {
  DType d{};
  CHECK(parse_dtype("f16", &d));
  CHECK(d == DType::f16);
  CHECK(dtype_name(DType::f16) == "f16");
  CHECK(dtype_size(DType::f16) == 2);
  CHECK(is_float(DType::f16));
  CHECK(wider_float(DType::f16, DType::f32) == DType::f32);
  CHECK(wider_float(DType::f64, DType::f16) == DType::f64);
  CHECK(wider_float(DType::f16, DType::f16) == DType::f16);
  uint16_t h;
  std::array<uint8_t, 8> bytes = scalar_bytes(DType::f16, 0.1);
  std::memcpy(&h, bytes.data(), 2);
  CHECK(h == 0x2e66);
}
