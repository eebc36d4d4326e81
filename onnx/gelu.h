// GELU as ONNX models before opset 20 write it: the tanh approximation's elementwise ops,
// recognized at import so that the tape has the gelu primitive (one kernel, a backward
// from x alone, nothing kept but x).
#pragma once

#include <optional>

#include "tape/tape.h"

namespace ytape::onnx_import {

/// `t` with each tanh-approximation GELU written out as exporters write it made one gelu
/// op, or nothing if there is none. Recognized: 0.5 * (x * (1 + tanh(k * (x + c * x^3))))
/// (PyTorch's export) and (0.5 * x) * (1 + tanh(...)) (ytape's), with x^3 as x * x * x
/// (as a Pow by 3 imports),
/// the operands of each product and sum in either order, the constants k = sqrt(2 / pi)
/// and c = 0.044715 rounded to x's dtype (f32 or f64) with one element each, and the
/// result of x's type. Both forms give the primitive's bits: multiplying by 0.5 is exact,
/// so where the product is taken does not matter, except where it is subnormal and where x
/// is above half the dtype's largest value (x * 2 overflows in PyTorch's order, and the
/// primitive gives x, the GELU's value there). The ops the
/// matched GELU leaves unused stay for dead-code elimination to remove; top-level ops
/// only, in one pass.
std::optional<Tape> recognize_gelu(const Tape& t);

}  // namespace ytape::onnx_import
