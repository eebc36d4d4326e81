// Promotion of a tape's f32 values to f64, for checks that need double precision.
#pragma once

#include "tape/tape.h"

namespace ytape {

/// The same computation with every f32 value in f64: f32 inputs and constants become f64
/// (constants converted exactly), and `dtype` attributes that say f32 say f64. Names,
/// locations and everything else are kept. Returns a copy when there is no f32.
Tape promote_to_f64(const Tape& t);

}  // namespace ytape
