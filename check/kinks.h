// Where a tape's function is not smooth: the choices its ops make (relu's side of zero,
// which argument max takes, the argmax of a pooling window, a comparison's answer), made
// visible as extra outputs, so that a finite-difference check can tell that its two points
// lie on different pieces of a piecewise function.
#pragma once

#include <cstddef>

#include "tape/tape.h"

namespace ytape::grad {

/// A copy of `t` whose outputs are followed by one "decision" output per choice-making op:
/// sign(x) for relu, abs and sign; the quotient of rem; the result of comparisons, argmax, floor,
/// ceil, round and conversions to integers or bools; a >= b for max and min; x == extremum for
/// maximum and minimum; the window indices of max pooling. Two inputs give equal decisions when no
/// op chose differently between them. `t.outputs.size()` is the index of the first decision.
Tape with_decisions(const Tape& t);

}  // namespace ytape::grad
