// Promotion of a tape's f32 and f16 values to f64, for checks that need double precision.
#pragma once

#include "tape/tape.h"

namespace ytape {

/// The same computation with every f32 and f16 value in f64: f32 and f16 inputs and
/// constants become f64 (constants converted exactly), and `dtype` attributes that say f32
/// or f16 say f64. Names, locations and everything else are kept. Returns a copy when
/// there is neither.
Tape promote_to_f64(const Tape& t);

}  // namespace ytape
