#include "tape/float16.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "tape/attrs.h"

namespace ytape {

float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  if (exp == 0) {
    // Subnormals (and zero) are mant * 2^-24, which a float holds exactly.
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  uint32_t bits =
      exp == 0x1f ? sign | 0x7f800000u | (mant << 13) : sign | ((exp + 112) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f16_from_double(double x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(x);
  if (a != a) return sign | 0x7e00;
  if (a == 0) return sign;
  if (std::isinf(a)) return sign | 0x7c00;
  int e2 = 0;
  std::frexp(a, &e2);  // a = f * 2^e2 with f in [0.5, 1): the leading bit is 2^(e2-1)
  int e = e2 - 1 < -14 ? -14 : e2 - 1;
  // Scaling by a power of two is exact, so nearbyint (ties to even in the default mode)
  // is the only rounding. Below 2^-14 the count is a subnormal's mantissa; a carry into
  // bit 10 (or 11) moves into the exponent field by plain addition, as the format intends.
  double m = std::nearbyint(std::ldexp(a, 10 - e));
  if (e2 - 1 < -14) return sign | static_cast<uint16_t>(m);
  uint32_t bits = (static_cast<uint32_t>(e + 15) << 10) + static_cast<uint32_t>(m) - 1024;
  return sign | static_cast<uint16_t>(bits >= 0x7c00 ? 0x7c00 : bits);
}

std::string float16_str(uint16_t h) {
  float v = f16_to_f32(h);
  if (v != v || std::isinf(v)) return float_str(v);
  // Five significant digits always suffice for f16; take the fewest that read back.
  for (int digits = 1; digits <= 5; ++digits) {
    std::string s = fmt::format("{:.{}g}", v, digits);
    // Written as float_str writes the double those digits read as: 65500.0, not 6.55e+04.
    double d = std::strtod(s.c_str(), nullptr);
    if (f16_from_double(d) == h) return float_str(d);
  }
  return float_str(v);
}

}  // namespace ytape
