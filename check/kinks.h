// Where a tape's function is not smooth: the choices its ops make (relu's side of zero,
// which argument max takes, the argmax of a pooling window, a comparison's answer), made
// visible as extra outputs, so that a finite-difference check can tell that its two points
// lie on different pieces of a piecewise function.
#pragma once

#include <cstddef>

#include "tape/tape.h"

namespace ytape::check {

/// A copy of `t` whose outputs are followed by one "decision" output per choice-making op
/// (the JUMP and KINK rows of tape/ops.def, and conversions to integers or bools): the
/// result itself for ops that jump (floor, a comparison, argmax, a conversion), but the
/// quotient for rem; sign(x) for relu and abs; a >= b for max and min; x == extremum for
/// maximum and minimum; the window indices of max pooling. Two inputs give equal decisions
/// when no op chose differently between them. `t.outputs.size()` is the index of the first
/// decision. Throws InternalError for a KINK primitive that has no decision here.
Tape with_decisions(const Tape& t);

}  // namespace ytape::check
