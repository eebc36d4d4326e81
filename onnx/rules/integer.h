// Integer arithmetic that the primitives do on floats only (rem, div, pow), for the tape's
// i64 values: through f64, which holds every integer of magnitude below 2^53 exactly, so
// the results are exact for those (every value of the 8-, 16- and 32-bit types). ONNX's
// narrower integer types are held as i64 (docs/onnx.md, Dtypes); `wrap_integer` gives a
// value the range of its ONNX type where the model names that type.
#pragma once

#include "onnx/importer.h"

namespace ytape::onnx_import {

/// x mod y of i64 `x` and `y` (broadcast): the remainder with the dividend's sign when
/// `c_sign` (C's fmod, ONNX's fmod = 1), else with the divisor's (Python's, fmod = 0).
Var integer_mod(Importer& im, Var x, Var y, bool c_sign);

/// x / y of i64 `x` and `y`, truncated toward zero (C's, ONNX's integer Div).
Var integer_div(Importer& im, Var x, Var y);

/// i64 `x` as the ONNX integer type `elem_type` holds it: wrapped around into its range
/// (uint8: mod 256; int8: into -128..127), as a cast to it does; `x` itself for int64.
Var wrap_integer(Importer& im, Var x, int32_t elem_type);

}  // namespace ytape::onnx_import
