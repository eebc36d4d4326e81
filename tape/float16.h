// IEEE 754 binary16 (f16) in software: conversions and the text form.
//
// f16 is a storage type in ytape: values are held as 16 bits and every computation on them
// widens to f32, so these few functions are all the f16 arithmetic there is (docs/primitives.md,
// Types).
#pragma once

#include <cstdint>
#include <string>

#include "tape/dtype.h"

namespace ytape {

/// The f16 with bits `h` as a float; exact for every bit pattern (NaN payloads kept).
float f16_to_f32(uint16_t h);
/// `x` rounded to f16, to nearest with ties to even: subnormals kept, values of magnitude
/// 65520 and above give infinity, NaN gives a quiet NaN of the same sign. Exact for f32
/// arguments too (a float widens to double exactly), so one rounding serves both.
uint16_t f16_from_double(double x);
/// The shortest decimal string that reads back (as a double, rounded to f16) to `h`,
/// written like float_str: 0.1 is "0.1", 1 is "1.0", and "nan", "inf", "-inf".
std::string float16_str(uint16_t h);

/// The wider of two float dtypes, f16 < f32 < f64: what two typed floats promote to, as
/// Julia's promote_type(Float16, Float32) is Float32.
inline DType wider_float(DType a, DType b) {
  auto rank = [](DType d) { return d == DType::f16 ? 0 : d == DType::f32 ? 1 : 2; };
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace ytape
