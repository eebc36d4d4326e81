// Lowering of f16 to f32: how the runtime runs f16 with kernels for f32 only.
#pragma once

#include "tape/tape.h"

namespace ytape {

/// Whether any value of `t` is f16 or any op's `dtype` attribute says f16.
bool has_f16(const Tape& t);

/// The same computation with f16 as a storage type only (docs/primitives.md, Types):
/// every op that reads or makes f16 values runs in f32 on its arguments widened exactly
/// and rounds each f16 result to f16 at once (convert to f16, then back to f32 for the
/// next op), so the values are those of f16 arithmetic done per op in f32. Inputs and
/// outputs keep their f16 types, names and order; `print` reads the f16 values. Only
/// `convert` (and constants, inputs, outputs) then touch f16 data. Returns a copy when
/// there is no f16.
Tape lower_f16(const Tape& t);

}  // namespace ytape
